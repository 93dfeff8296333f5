import { statSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { RequestLogInsert } from '../../src/request-log/row-layout.js';
import { successfulLogRow } from '../support/request-log-rows.js';
import { useMockForServes } from '../support/serve-fixture.js';
import { openServedDatabase, prepareServe, type ServeFiles, startServe } from '../support/serve-process.js';
import { waitFor } from '../support/wait.js';
import { chat, mockModels } from './support.js';

/**
 * docs/operations.md, "Retention": the job of a running `serve` (not the function called by a test) runs shortly
 * after start-up and then every `request_log.retention_interval`, deletes rows past `request_log.retention`, and
 * frees the disk space: the SQLite file shrinks, PostgreSQL's expired daily partitions are dropped. `retention: 0`
 * keeps everything.
 */

const day = 86_400_000;
const dayStart = (time: number) => Math.floor(time / day) * day;
const partitionName = (time: number) =>
  `request_log_p${new Date(dayStart(time)).toISOString().slice(0, 10).replaceAll('-', '')}`;

const serves = useMockForServes();

function seedRows(count: number, createdAt: number, tag: string): RequestLogInsert[] {
  return Array.from({ length: count }, (_, index) =>
    successfulLogRow({
      request_id: `seed_${tag}_${index}`,
      created_at: createdAt + (index % 1000),
      account_id: 'seed-account',
      key_id: 'seed-key',
      key_name: 'seed',
      model: 'mock',
      latency_ms: 10,
      user_agent: 'x'.repeat(300),
    }),
  );
}

/** Inserts rows the way an earlier run of the gateway would have left them (PostgreSQL: in their day's partition). */
async function seed(files: ServeFiles, rows: RequestLogInsert[]): Promise<void> {
  const database = await openServedDatabase(files);
  try {
    if (database.dialect === 'postgres') {
      for (const time of new Set(rows.map((row) => dayStart(row.created_at)))) {
        await sql
          .raw(
            `create table if not exists ${partitionName(time)} partition of request_log for values from (${time}) to (${time + day})`,
          )
          .execute(database.db);
      }
    }
    for (let start = 0; start < rows.length; start += 500) {
      await database.db
        .insertInto('request_log')
        .values(rows.slice(start, start + 500))
        .execute();
    }
  } finally {
    await database.close();
  }
}

async function countSeeded(files: ServeFiles, tag: string): Promise<number> {
  const database = await openServedDatabase(files);
  try {
    const row = await database.db
      .selectFrom('request_log')
      .select((select) => select.fn.countAll<string>().as('count'))
      .where('request_id', 'like', `seed_${tag}_%`)
      .executeTakeFirstOrThrow();
    return Number(row.count);
  } finally {
    await database.close();
  }
}

/** SQLite: the size of the database file once the WAL is checkpointed into it. PostgreSQL: the log's partitions. */
async function storage(files: ServeFiles): Promise<{ bytes: number; partitions: string[] }> {
  const database = await openServedDatabase(files);
  try {
    if (database.sqlite) {
      // A checkpoint that meets the server's log writer is refused as busy: ask until one completes.
      await waitFor('a complete checkpoint', () => {
        const results = database.sqlite?.pragma('wal_checkpoint(TRUNCATE)') as Array<{ busy: number }>;
        return results[0]?.busy === 0;
      });
      return { bytes: statSync(path.join(files.dataDir, 'switchboard.db')).size, partitions: [] };
    }
    const result = await sql<{ name: string }>`
      select child.relname as name from pg_inherits
      join pg_class child on child.oid = pg_inherits.inhrelid
      where pg_inherits.inhparent = 'request_log'::regclass`.execute(database.db);
    return { bytes: 0, partitions: result.rows.map((row) => row.name) };
  } finally {
    await database.close();
  }
}

describe.each(['sqlite', 'postgres'] as const)('retention on %s', (engine) => {
  it('the running job deletes expired rows on its schedule and frees the space; recent rows stay', async () => {
    const files = await prepareServe({
      database: engine,
      config: {
        request_log: { retention: '30d', retention_interval: '2s', flush_interval: '50ms' },
        ...mockModels(serves.mock),
      },
    });
    await files.cli('accounts', 'create', 'acme');
    const { key } = await files.cli<{ key: string }>('keys', 'create', '--account', 'acme', '--name', 'app');
    const now = Date.now();
    await seed(files, [...seedRows(20_000, now - 40 * day, 'old'), ...seedRows(500, now - 2 * day, 'recent')]);
    const before = await storage(files);
    if (engine === 'postgres') expect(before.partitions).toContain(partitionName(now - 40 * day));

    const node = await startServe({ reuse: files });
    // The run shortly after start-up.
    await waitFor('the expired rows to be deleted', async () => (await countSeeded(files, 'old')) === 0, {
      timeoutMs: 30_000,
    });
    // The run is over (space handed back too) when it says so.
    await waitFor('the run to report what it removed', () =>
      node.output.some((line) => line.includes('request-log retention removed old rows')),
    );
    expect(await countSeeded(files, 'recent')).toBe(500);
    const after = await storage(files);
    if (engine === 'sqlite') expect(after.bytes).toBeLessThan(before.bytes / 2);
    else expect(after.partitions).not.toContain(partitionName(now - 40 * day));

    // Rows that expire while it runs go at a later run of the schedule, not only at start-up; requests are served.
    await seed(files, seedRows(2000, now - 35 * day, 'later'));
    expect((await chat(node, key)).status).toBe(200);
    await waitFor('the later expired rows to be deleted', async () => (await countSeeded(files, 'later')) === 0, {
      timeoutMs: 30_000,
    });
    if (engine === 'postgres') expect((await storage(files)).partitions).not.toContain(partitionName(now - 35 * day));
    expect(await node.stop()).toBe(0);
  });

  it('retention: 0 keeps every row, however old, while the job runs', async () => {
    const files = await prepareServe({
      database: engine,
      config: {
        logging: { level: 'debug' },
        request_log: { retention: 0, retention_interval: '1s' },
        ...mockModels(serves.mock),
      },
    });
    const now = Date.now();
    await seed(files, seedRows(1000, now - 400 * day, 'ancient'));
    const node = await startServe({ reuse: files });
    const runs = () => node.output.filter((line) => line.includes('"msg":"request-log retention ran"')).length;
    await waitFor('the job to run twice', () => runs() >= 2, { timeoutMs: 30_000 });
    expect(await countSeeded(files, 'ancient')).toBe(1000);
    expect(node.output.join('\n')).not.toContain('retention removed');
    expect(await node.stop()).toBe(0);
  });
});
