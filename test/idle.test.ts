import { statSync } from 'node:fs';
import SqliteDatabase from 'better-sqlite3';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { createAccount } from '../src/accounts/service.js';
import type { DatabaseHandle } from '../src/db/connect.js';
import { createKey } from '../src/keys/service.js';
import { RowBatch } from '../src/request-log/row-batch.js';
import { startSqliteWorker } from '../src/request-log/sqlite-worker.js';
import { type OpenTestDatabase, openTestDatabase, testEngine } from './support/database.js';
import { chatBody, startTestGateway, type TestGateway, waitForLogRows } from './support/gateway.js';
import { type MockUpstream, startMockUpstream } from './support/mock-openai-upstream.js';
import { successfulLogRow } from './support/request-log-rows.js';
import { waitFor } from './support/wait.js';

/**
 * An idle gateway writes nothing to its database: not a timer's checkpoint, not a poll, not a sweep. Each test
 * watches the database for a window in which every periodic task runs many times over (intervals shortened for the
 * test); a slow machine runs them fewer times, so it can only make the test weaker, never make it fail.
 */

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

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
  it('writes nothing to the database once the traffic has stopped', async () => {
    mock = await startMockUpstream();
    gateway = await startTestGateway({
      mock,
      // Polls and flushes many times a second, so the window below sees each of them run dozens of times.
      config: { keys: { change_poll_interval: '20ms' }, request_log: { flush_interval: '20ms' } },
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
        // Two checkpoint intervals (1 s) and ~100 change polls and flush intervals.
        await wait(2500);
        expect(sqliteState(file, reader)).toEqual(before);
      } finally {
        reader.close();
      }
    } else {
      const before = await postgresState(handle);
      await wait(2500);
      expect(await postgresState(handle)).toEqual(before);
    }
  });
});

describe.skipIf(testEngine === 'postgres')("the SQLite thread's checkpoints", () => {
  it('truncate the -wal once the writes stop, and then touch no file', async () => {
    opened = await openTestDatabase('idle', 'sqlite');
    const database = opened.handle;
    const file = database.location;
    const account = await createAccount(database.db, { name: 'acme' });
    const key = await createKey(database.db, Buffer.from('s'.repeat(32)), { account: 'acme', name: 'app' });
    const worker = startSqliteWorker({ file, checkpointIntervalMs: 10, onError: () => {} });
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
      // 200 intervals: more than three times the 60 after which a checkpoint used to TRUNCATE regardless.
      await wait(2000);
      expect(sqliteState(file, reader)).toEqual(before);
      expect(reader.prepare('select count(*) from request_log').pluck().get()).toBe(1);
    } finally {
      reader.close();
      await worker.close();
    }
  });
});
