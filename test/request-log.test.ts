import { execFile } from 'node:child_process';
import { readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createAccount } from '../src/accounts/service.js';
import type { DatabaseHandle } from '../src/db/connect.js';
import { findKeyById } from '../src/db/repositories/api-keys.js';
import { createKey } from '../src/keys/service.js';
import { createLogger } from '../src/observability/logger.js';
import { type RequestLogInsert, requestLogNumberColumns } from '../src/request-log/row-layout.js';
import type { SqliteWorker } from '../src/request-log/sqlite-worker.js';
import { RequestLogWriter } from '../src/request-log/writer.js';
import { projectRoot } from './support/cli.js';
import { type OpenTestDatabase, openTestDatabase, testEngine } from './support/database.js';
import { successfulLogRow } from './support/request-log-rows.js';
import { waitFor } from './support/wait.js';

const run = promisify(execFile);
let opened: OpenTestDatabase;
let directory: string;
let database: DatabaseHandle;
let keyId: string;
let accountId: string;
const logger = createLogger('silent');

beforeEach(async () => {
  opened = await openTestDatabase('log');
  ({ handle: database, directory } = opened);
  const account = await createAccount(database.db, { name: 'acme' });
  accountId = account.id;
  keyId = (await createKey(database.db, Buffer.from('s'.repeat(32)), { account: 'acme', name: 'app' })).info.id;
});

afterEach(() => opened.close());

function row(index: number, at = Date.now()): RequestLogInsert {
  return successfulLogRow({
    request_id: `req_${index}`,
    created_at: at,
    account_id: accountId,
    key_id: keyId,
    key_name: 'app',
    model: 'm',
  });
}

function writer(options: Partial<ConstructorParameters<typeof RequestLogWriter>[0]> = {}) {
  return new RequestLogWriter({
    database,
    logger,
    batchSize: 500,
    flushIntervalMs: 60_000,
    maxQueue: 100_000,
    spillDir: path.join(directory, 'spill'),
    ...options,
  });
}

const count = async () =>
  Number(
    (
      await database.db
        .selectFrom('request_log')
        .select((select) => select.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

/** Makes writes fail the way a briefly unavailable database does, then heals it. */
const breakTable = () => sql`alter table request_log rename to request_log_away`.execute(database.db);
const healTable = () => sql`alter table request_log_away rename to request_log`.execute(database.db);

describe('request-log writer', () => {
  it("writes in batches and records each key's last use", async () => {
    const log = writer();
    const lastUse = Date.now() - 5000;
    for (let index = 0; index < 1234; index++) log.enqueue(row(index, lastUse - index));
    await log.flush();
    expect(await count()).toBe(1234);
    expect(log.depth).toBe(0);
    expect(Number((await findKeyById(database.db, keyId))?.last_used_at)).toBe(lastUse);
  });

  it('stores every column as given, whatever its text holds (quotes, backslashes, braces, NULL, newlines, emoji)', async () => {
    const awkward = [
      '"quoted"',
      'back\\slash\\',
      '{braces},comma',
      'NULL',
      '',
      ' spaced ',
      'line\nbreak\ttab',
      'é ✓ 🎉',
      '\\"both"\\',
    ];
    const full = (index: number): RequestLogInsert => ({
      ...row(index, 1_764_000_000_000 + index),
      request_id: `req_${awkward[index % awkward.length]}_${index}`,
      key_name: awkward[(index + 1) % awkward.length] as string,
      model: awkward[(index + 2) % awkward.length] as string,
      provider: 'p',
      upstream_model: awkward[(index + 3) % awkward.length] as string,
      status: 502,
      outcome: 'error',
      error_type: 'upstream_error',
      error_code: awkward[(index + 4) % awkward.length] as string,
      error_message: `failed: ${awkward[(index + 5) % awkward.length]}`,
      stream: 1,
      latency_ms: 1234,
      ttft_ms: 56,
      prompt_tokens: 2_000_000_000,
      completion_tokens: 0,
      cached_tokens: 7,
      reasoning_tokens: 8,
      total_tokens: 9,
      usage_estimated: 1,
      cost_usd: 0.000_012_345_678_9,
      user_agent: awkward[(index + 6) % awkward.length] as string,
      request_body: JSON.stringify({ messages: [{ content: awkward.join('|') }] }),
      response_body: awkward.join('\n').repeat(50),
      served_model: 'sm',
      deployment: 'p/m',
      attempt_count: 2,
      attempts: JSON.stringify([{ deployment: 'p/m', error: awkward[index % awkward.length] }]),
      cache_write_tokens: 3,
      served_latency_ms: 45,
      endpoint: index % 2 ? 'chat_completions' : awkward[(index + 7) % awkward.length],
    });
    const rows = [...Array.from({ length: 30 }, (_, index) => full(index)), row(30, 1_764_000_000_030)];
    const log = writer();
    for (const each of rows) log.enqueue(each);
    await log.flush();
    const stored = await database.db.selectFrom('request_log').selectAll().orderBy('id').execute();
    expect(stored).toHaveLength(rows.length);
    // PostgreSQL returns bigint columns as strings; compare numbers as numbers.
    const numbers: ReadonlySet<string> = new Set(requestLogNumberColumns);
    stored.forEach((got, index) => {
      const expected = rows[index] as Record<string, unknown>;
      for (const [column, value] of Object.entries(got)) {
        if (column === 'id') continue;
        const want = expected[column] ?? (column === 'usage_estimated' ? 0 : null);
        expect([column, value === null || !numbers.has(column) ? value : Number(value)]).toEqual([column, want]);
      }
    });
  });

  it("moves each key's last use to its own latest row in a batch", async () => {
    const other = (await createKey(database.db, Buffer.from('s'.repeat(32)), { account: 'acme', name: 'other' })).info
      .id;
    const log = writer();
    log.enqueue(row(1, 1_000));
    log.enqueue({ ...row(2, 3_000), key_id: other });
    log.enqueue(row(3, 2_000));
    log.enqueue({ ...row(4, 2_500), key_id: other });
    await log.flush();
    expect(Number((await findKeyById(database.db, keyId))?.last_used_at)).toBe(2_000);
    expect(Number((await findKeyById(database.db, other))?.last_used_at)).toBe(3_000);
  });

  it('writes only full batches under load; what is left waits for the interval or a flush', async () => {
    const log = writer({ batchSize: 100 });
    // The 100th row starts a write; the 30 that arrive while it runs do not make a batch of their own.
    for (let index = 0; index < 130; index++) log.enqueue(row(index));
    // The write under way ends with the full batch: the 30 left are not written after it.
    await log.whenIdle();
    expect(await count()).toBe(100);
    expect(log.depth).toBe(30);
    await log.flush();
    expect(await count()).toBe(130);
    expect(log.depth).toBe(0);
  });

  it('flushes what was queued when asked, not what arrives while it writes (else it never ends under load)', async () => {
    const log = writer({ batchSize: 100 });
    for (let index = 0; index < 10; index++) log.enqueue(row(index));
    const flushed = log.flush();
    // Requests keep finishing while the flush writes.
    for (let index = 10; index < 15; index++) log.enqueue(row(index));
    await flushed;
    expect(await count()).toBe(10);
    expect(log.depth).toBe(5);
    // A flush asked for while a write is under way takes the rows queued by then.
    const first = log.flush();
    log.enqueue(row(15));
    const second = log.flush();
    await Promise.all([first, second]);
    expect(await count()).toBe(16);
    expect(log.depth).toBe(0);
  });

  it('keeps rows when a write fails and writes them once the database is back', async () => {
    const log = writer();
    await breakTable();
    for (let index = 0; index < 10; index++) log.enqueue(row(index));
    await log.flush();
    expect(log.depth).toBe(10);
    await healTable();
    // Flushes are refused until the retry backoff has passed: flush until the rows are written.
    await waitFor('the kept rows to be written', async () => {
      await log.flush();
      return log.depth === 0;
    });
    expect(await count()).toBe(10);
  });

  it('sets aside a row the database refuses instead of holding every row behind it', async () => {
    const log = writer();
    for (let index = 0; index < 5; index++) {
      const item = row(index);
      // A row no database accepts (request_id is NOT NULL).
      log.enqueue(index === 2 ? ({ ...item, request_id: null } as unknown as RequestLogInsert) : item);
    }
    await log.flush();
    expect(log.depth).toBe(0);
    expect(await count()).toBe(4);
    const rejected = readdirSync(path.join(directory, 'spill')).filter((file) => file.endsWith('.rejected'));
    expect(rejected).toHaveLength(1);
    // A database that is down (every row fails) is not mistaken for bad rows: everything stays queued.
    await breakTable();
    for (let index = 0; index < 3; index++) log.enqueue(row(10 + index));
    await log.flush();
    expect(log.depth).toBe(3);
    await healTable();
  });

  it('applies backpressure when the queue is full instead of dropping rows', async () => {
    const log = writer({ maxQueue: 100 });
    await breakTable();
    for (let index = 0; index < 100; index++) log.enqueue(row(index));
    const wait = log.waitForCapacity();
    expect(wait).toBeInstanceOf(Promise);
    let released = false;
    void wait?.then(() => {
      released = true;
    });
    // The write the full queue started has failed: nobody waiting for room is let through.
    await log.whenIdle();
    expect(released).toBe(false);
    await healTable();
    await waitFor('the full queue to be written', async () => {
      await log.flush();
      return log.depth === 0;
    });
    await wait;
    expect(released).toBe(true);
    expect(await count()).toBe(100);
  });

  it('spills what it cannot write at shutdown and writes it at the next start', async () => {
    const log = writer();
    await breakTable();
    for (let index = 0; index < 25; index++) log.enqueue(row(index));
    await log.close(Date.now() + 300);
    expect(readdirSync(path.join(directory, 'spill'))).toHaveLength(1);
    await healTable();
    const next = writer();
    expect(await next.recoverSpills()).toBe(25);
    expect(await count()).toBe(25);
    expect(readdirSync(path.join(directory, 'spill'))).toHaveLength(0);
  });
});

/** Runs `use` with a SQLite worker thread on the test database, closed afterwards. */
async function withSqliteWorker(use: (worker: SqliteWorker) => Promise<void>): Promise<void> {
  const { startSqliteWorker } = await import('../src/request-log/sqlite-worker.js');
  const worker = startSqliteWorker({
    file: database.location,
    onError: () => {},
  });
  try {
    await use(worker);
  } finally {
    await worker.close();
  }
}

describe('the SQLite worker thread', () => {
  it.skipIf(testEngine === 'postgres')("starts from tsc's dist/ output as well (npm run build)", async () => {
    // The bundle is covered by the tests that run bin/switchboard (shutdown.test.ts); this is the unbundled build.
    const script = `
      const { startSqliteWorker } = await import(${JSON.stringify(path.join(projectRoot, 'dist/request-log/sqlite-worker.js'))});
      const { RowBatch } = await import(${JSON.stringify(path.join(projectRoot, 'dist/request-log/row-batch.js'))});
      const errors = [];
      const worker = startSqliteWorker({ file: process.argv[2], onError: (message) => errors.push(message) });
      await worker.write(RowBatch.of(JSON.parse(process.argv[3])).message());
      await worker.close();
      process.stdout.write(JSON.stringify(errors));`;
    // A file, not --eval: a worker inherits its parent's execArgv.
    const scriptFile = path.join(directory, 'write-through-dist.mjs');
    writeFileSync(scriptFile, script);
    const rows = [row(1), row(2)];
    const { stdout } = await run(process.execPath, [scriptFile, database.location, JSON.stringify(rows)]);
    expect(JSON.parse(stdout)).toEqual([]);
    expect(await count()).toBe(2);
  });

  it.skipIf(testEngine === 'postgres')('collects its garbage on request and goes on writing', async () => {
    const { startSqliteWorker } = await import('../src/request-log/sqlite-worker.js');
    const errors: string[] = [];
    const worker = startSqliteWorker({
      file: database.location,
      onError: (message) => errors.push(message),
    });
    try {
      const log = writer({ sqliteWorker: worker });
      for (let index = 0; index < 20; index++) log.enqueue(row(index));
      await log.flush();
      worker.collectGarbage();
      for (let index = 20; index < 40; index++) log.enqueue(row(index));
      await log.flush();
      expect(await count()).toBe(40);
      expect(worker.alive).toBe(true);
      expect(errors).toEqual([]);
    } finally {
      await worker.close();
    }
  });

  it.skipIf(testEngine === 'postgres')(
    'stores every column as enqueued, over several statements, and moves the key to its latest use',
    async () => {
      await withSqliteWorker(async (worker) => {
        const start = Date.now() - 10_000;
        // 123 rows: two 50-row statements and 23 rows one by one. Every column set, nulls and text with a NUL-free
        // multi-byte character among them.
        const rows: RequestLogInsert[] = Array.from({ length: 123 }, (_, index) => ({
          ...row(index, start + index),
          key_name: 'app ✓',
          provider: index % 2 ? 'openai' : null,
          upstream_model: 'gpt-4o-mini',
          status: index % 3 ? 200 : 502,
          outcome: index % 3 ? 'success' : 'error',
          error_type: index % 3 ? null : 'server_error',
          error_code: index % 3 ? null : 'upstream_error',
          error_message: index % 3 ? null : `failed #${index}`,
          stream: index % 2,
          ttft_ms: index % 2 ? index : null,
          prompt_tokens: 10 + index,
          completion_tokens: 20,
          cached_tokens: 0,
          reasoning_tokens: null,
          total_tokens: 30 + index,
          usage_estimated: index % 2,
          cost_usd: index / 1e6,
          user_agent: `agent/${index % 4}`,
          request_body: index === 7 ? '{"model":"m"}' : null,
          response_body: null,
          served_model: 'm',
          deployment: 'openai/gpt-4o-mini',
          attempt_count: 1,
          attempts: `[{"n":${index}}]`,
          cache_write_tokens: index % 5 ? 0 : 4,
          served_latency_ms: index % 3 ? 40 + index : null,
          endpoint: index % 4 ? 'chat_completions' : index % 8 ? 'models' : null,
        }));
        const log = writer({ sqliteWorker: worker, batchSize: 200 });
        for (const item of rows) log.enqueue(item);
        await log.flush();
        const stored = await database.db.selectFrom('request_log').selectAll().orderBy('id').execute();
        expect(stored.map(({ id: _id, ...columns }) => columns)).toEqual(rows);
        expect(Number((await findKeyById(database.db, keyId))?.last_used_at)).toBe(start + 122);
      });
    },
  );

  it.skipIf(testEngine === 'postgres')(
    'inserts a batch account by account, each account and key keeping the order its requests came in',
    async () => {
      await withSqliteWorker(async (worker) => {
        const start = Date.now() - 10_000;
        // Three accounts and two keys taking turns, as requests of many tenants arrive.
        const rows = Array.from({ length: 157 }, (_, index) => ({
          ...row(index, start + index),
          account_id: `acct_${index % 3}`,
          key_id: `key_${(index * 7) % 2}`,
        }));
        const log = writer({ sqliteWorker: worker, batchSize: 500 });
        for (const item of rows) log.enqueue(item);
        await log.flush();
        const stored = await database.db.selectFrom('request_log').selectAll().orderBy('id').execute();
        expect(stored).toHaveLength(rows.length);
        const group = (item: RequestLogInsert) => `${item.account_id}/${item.key_id}`;
        const storedGroups = stored.map(group);
        // Each account's rows are contiguous, and within an account each key's rows are.
        for (const account of ['acct_0', 'acct_1', 'acct_2']) {
          const positions = stored.flatMap((item, index) => (item.account_id === account ? [index] : []));
          expect(positions).toEqual(positions.map((_, offset) => (positions[0] ?? 0) + offset));
        }
        expect(new Set(storedGroups).size).toBe(new Set(rows.map(group)).size);
        for (const name of new Set(storedGroups)) {
          const inArrivalOrder = rows.filter((item) => group(item) === name).map((item) => item.request_id);
          expect(stored.filter((item) => group(item) === name).map((item) => item.request_id)).toEqual(inArrivalOrder);
        }
      });
    },
  );
});

describe('SQLite checkpoints', () => {
  it.skipIf(testEngine === 'postgres')(
    'are done by a worker thread: the database file takes the new rows without any commit doing it',
    async () => {
      const { startTestGateway, chatBody, postChat, waitForLogRows } = await import('./support/gateway.js');
      const { startMockUpstream } = await import('./support/mock-openai-upstream.js');
      const mock = await startMockUpstream();
      const gateway = await startTestGateway({ mock });
      try {
        const file = path.join(gateway.dataDir, 'switchboard.db');
        const sizeBefore = statSync(file).size;
        expect(gateway.gateway.database.sqlite?.pragma('wal_autocheckpoint', { simple: true })).toBe(0);
        const ids: string[] = [];
        for (let index = 0; index < 300; index++) {
          const response = await postChat(gateway, chatBody('mock'));
          await response.text();
          ids.push(response.headers.get('x-request-id') as string);
        }
        await waitForLogRows(gateway, ids);
        await waitFor('a checkpoint to grow the database file', () => statSync(file).size > sizeBefore);
      } finally {
        await gateway.close();
        await mock.close();
      }
    },
  );
});
