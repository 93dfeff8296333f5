import { statSync } from 'node:fs';
import SqliteDatabase from 'better-sqlite3';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { createAccount } from '../src/accounts/service.js';
import type { DatabaseHandle } from '../src/db/connect.js';
import { createKey } from '../src/keys/service.js';
import { RowBatch } from '../src/request-log/row-batch.js';
import { startSqliteWorker } from '../src/request-log/sqlite-worker.js';
import { callCount } from './support/call-count.js';
import { type OpenTestDatabase, openTestDatabase, testEngine } from './support/database.js';
import { chatBody, startTestGateway, type TestGateway, waitForLogRows } from './support/gateway.js';
import { type MockUpstream, startMockUpstream } from './support/mock-openai-upstream.js';
import { successfulLogRow } from './support/request-log-rows.js';
import { waitFor } from './support/wait.js';

/**
 * An idle gateway writes nothing to its database: not a timer's checkpoint, not a poll, not a sweep. Each test
 * watches the database while the periodic tasks run many times over (intervals shortened for the test), counted as
 * they run (src/startup/test-hooks.ts): a slow machine makes the test wait longer, never see fewer of them.
 */

// A hundred polls 20 ms apart take 2 s, and several times that on a loaded machine: time enough to count them.
const counting = { timeoutMs: 45_000 };
const testOptions = { timeout: 60_000 };

/**
 * What a write to a SQLite database in WAL mode changes: the -wal's size (a commit appends frames), the database file
 * (a checkpoint copies them there), and the count another connection sees (a commit, or a checkpoint restarting the
 * -wal). Not the empty -wal's time: under heavy CPU contention it moved once with none of these changing (cause not
 * found; docs/performance.md#idle).
 */
function sqliteState(file: string, reader: SqliteDatabase.Database) {
  const database = statSync(file);
  return {
    database: `${database.size}@${database.mtimeMs}`,
    walBytes: statSync(`${file}-wal`, { throwIfNoEntry: false })?.size ?? 0,
    commitsSeen: Number(reader.pragma('data_version', { simple: true })),
  };
}

/** PostgreSQL: a fingerprint of every table's rows and their row versions (xmin changes on any insert or update). */
async function postgresState(database: DatabaseHandle): Promise<Record<string, string>> {
  const tables = await sql<{ name: string }>`
    select table_name as name from information_schema.tables
    where table_schema = current_schema() and table_type = 'BASE TABLE' order by table_name`.execute(database.db);
  const state: Record<string, string> = {};
  for (const { name } of tables.rows) {
    const result = await sql<{ rows: string; fingerprint: string | null }>`
      select count(*)::text as rows, sum(hashtext(t::text || t.xmin::text))::text as fingerprint
      from ${sql.table(name)} t`.execute(database.db);
    state[name] = `${result.rows[0]?.rows}:${result.rows[0]?.fingerprint}`;
  }
  return state;
}

let mock: MockUpstream | undefined;
let gateway: TestGateway | undefined;
let opened: OpenTestDatabase | undefined;

afterEach(async () => {
  await gateway?.close();
  await mock?.close();
  await opened?.close();
  gateway = undefined;
  mock = undefined;
  opened = undefined;
});

describe('an idle gateway', () => {
  it('writes nothing to the database once the traffic has stopped', testOptions, async () => {
    mock = await startMockUpstream();
    const polls = callCount('access-change polls');
    const checkpointTicks = callCount('checkpoint ticks');
    gateway = await startTestGateway({
      mock,
      // Polls and flushes many times a second, so the window below sees each of them run dozens of times.
      config: { keys: { change_poll_interval: '20ms' }, request_log: { flush_interval: '20ms' } },
      testHooks: { afterAccessChangePoll: polls.hook, afterCheckpointTick: checkpointTicks.hook },
    });
    const response = await fetch(`${gateway.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${gateway.key}`, 'content-type': 'application/json' },
      body: JSON.stringify(chatBody('mock')),
    });
    expect(response.status).toBe(200);
    await response.arrayBuffer();
    const requestId = response.headers.get('x-request-id') ?? '';
    expect(await waitForLogRows(gateway, [requestId])).toHaveLength(1);

    const handle = gateway.gateway.database;
    if (testEngine === 'sqlite') {
      const file = handle.location;
      const reader = new SqliteDatabase(file, { readonly: true });
      try {
        // The write is followed by its checkpoints (the -wal truncated once the writes stop): wait for them.
        await waitFor('the -wal is checkpointed and truncated', () => statSync(`${file}-wal`).size === 0);
        const before = sqliteState(file, reader);
        // Two ticks of the checkpoint timer (1 s apart) and 100 change polls, with the flush intervals between them.
        await Promise.all([polls.more(100, counting), checkpointTicks.more(2, counting)]);
        expect(sqliteState(file, reader)).toEqual(before);
      } finally {
        reader.close();
      }
    } else {
      const before = await postgresState(handle);
      await polls.more(100, counting);
      expect(await postgresState(handle)).toEqual(before);
    }
  });
});

describe.skipIf(testEngine === 'postgres')("the SQLite thread's checkpoints", () => {
  it('truncate the -wal once the writes stop, and then touch no file', testOptions, async () => {
    opened = await openTestDatabase('idle', 'sqlite');
    const database = opened.handle;
    const file = database.location;
    const account = await createAccount(database.db, { name: 'acme' });
    const key = await createKey(database.db, Buffer.from('s'.repeat(32)), { account: 'acme', name: 'app' });
    const ticks = callCount('checkpoint ticks');
    const worker = startSqliteWorker({
      file,
      checkpointIntervalMs: 10,
      afterCheckpointTick: ticks.hook,
      onError: () => {},
    });
    const reader = new SqliteDatabase(file, { readonly: true });
    try {
      const row = successfulLogRow({
        request_id: 'req_idle',
        created_at: Date.now(),
        account_id: account.id,
        key_id: key.info.id,
        key_name: 'app',
        model: 'm',
      });
      await worker.write(RowBatch.of([row]).message());
      await waitFor('the -wal is checkpointed and truncated', () => statSync(`${file}-wal`).size === 0);
      const before = sqliteState(file, reader);
      // 200 ticks: more than three times the 60 after which a checkpoint used to TRUNCATE regardless.
      await ticks.more(200, counting);
      expect(sqliteState(file, reader)).toEqual(before);
      expect(reader.prepare('select count(*) from request_log').pluck().get()).toBe(1);
    } finally {
      reader.close();
      await worker.close();
    }
  });
});
