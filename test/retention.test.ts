import { statSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { rollupShapes } from '../src/db/usage-rollup-layout.js';
import { createLogger } from '../src/observability/logger.js';
import { createRequestLogBatchWriter } from '../src/request-log/batch-writer.js';
import { applyRetention, ensurePartitions } from '../src/request-log/retention.js';
import { RowBatch } from '../src/request-log/row-batch.js';
import type { RequestLogInsert } from '../src/request-log/row-layout.js';
import { testEngine } from './support/database.js';
import { chatBody, postChat } from './support/gateway.js';
import { useGatewayWithMock } from './support/gateway-fixture.js';
import { successfulLogRow } from './support/request-log-rows.js';

/** Retention deletes old rows in batches without stalling requests, and the disk space really comes back. */

const day = 86_400_000;
const setup = useGatewayWithMock({ config: { request_log: { retention: 0 } } });

function rows(count: number, createdAt: number, accountId: string): RequestLogInsert[] {
  return Array.from({ length: count }, (_, index) =>
    successfulLogRow({
      request_id: `req_seed_${createdAt}_${index}`,
      created_at: createdAt + (index % 1000),
      account_id: accountId,
      key_id: setup.gateway.keyId,
      key_name: 'seed',
      model: 'mock',
      latency_ms: 10,
      user_agent: 'x'.repeat(200),
    }),
  );
}

async function databaseBytes(): Promise<number> {
  const database = setup.gateway.gateway.database;
  if (database.dialect === 'sqlite') {
    // The file holds every page only after a complete checkpoint; one that meets the log writer's thread (writing, or
    // checkpointing itself) is refused as busy and leaves pages in the WAL, so ask until one completes.
    for (let attempt = 0; attempt < 100; attempt++) {
      const results = (database.sqlite?.pragma('wal_checkpoint(TRUNCATE)') ?? []) as Array<{ busy: number }>;
      if (results[0]?.busy === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return statSync(path.join(setup.gateway.dataDir, 'switchboard.db')).size;
  }
  const result = await sql<{ bytes: string }>`
    select coalesce(sum(pg_total_relation_size(inhrelid)), 0)::text as bytes
    from pg_inherits where inhparent = 'request_log'::regclass`.execute(database.db);
  return Number(result.rows[0]?.bytes ?? 0);
}

describe('request-log retention', () => {
  it('deletes rows past the retention age in batches that let requests through, keeps the rest, and frees the space', async () => {
    const database = setup.gateway.gateway.database;
    const account = await database.db
      .selectFrom('accounts')
      .select('id')
      .where('name', '=', 'acme')
      .executeTakeFirstOrThrow();
    const now = Date.now();
    const old = now - 40 * day;
    if (database.dialect === 'postgres') await ensurePartitions(database.db, old);
    const write = createRequestLogBatchWriter(database);
    for (let batch = 0; batch < 12; batch++) await write(RowBatch.of(rows(5000, old - batch * 1000, account.id)));
    await write(RowBatch.of(rows(2000, now - 60_000, account.id)));
    const before = await databaseBytes();

    // Between two batches of deletes a request is sent and must be answered: retention deletes in short statements
    // that let requests through, never one statement over every old row (which would hold the database for all of it).
    const cutoff = now - 30 * day;
    const oldRowsLeft = async () =>
      Number(
        (
          await database.db
            .selectFrom('request_log')
            .select((select) => select.fn.countAll<number>().as('n'))
            .where('created_at', '<', cutoff)
            .executeTakeFirstOrThrow()
        ).n,
      );
    const answeredBetweenBatches: Array<{ status: number; oldRowsLeft: number }> = [];
    const result = await applyRetention(
      {
        database,
        logger: createLogger('silent'),
        retentionMs: 30 * day,
        batchSize: 2000,
        betweenDeleteBatches: async () => {
          const response = await postChat(setup.gateway, chatBody('mock'));
          await response.text();
          answeredBetweenBatches.push({ status: response.status, oldRowsLeft: await oldRowsLeft() });
        },
      },
      now,
    );

    expect(result.deletedRows + result.droppedPartitions).toBeGreaterThan(0);
    if (database.dialect === 'sqlite') {
      expect(result.deletedRows).toBe(60_000);
      // 60,000 rows in 30 batches of 2,000: a request answered after each, the old rows going 2,000 at a time.
      expect(answeredBetweenBatches).toEqual(
        Array.from({ length: 30 }, (_, index) => ({ status: 200, oldRowsLeft: 60_000 - 2000 * (index + 1) })),
      );
    } else {
      // PostgreSQL drops the old days' partitions whole: no row is deleted one by one.
      expect(result.droppedPartitions).toBeGreaterThanOrEqual(1);
    }
    const remaining = await database.db
      .selectFrom('request_log')
      .select((select) => select.fn.countAll<number>().as('n'))
      .where('request_id', 'like', 'req_seed_%')
      .executeTakeFirstOrThrow();
    expect(Number(remaining.n)).toBe(2000);
    const after = await databaseBytes();
    expect(after).toBeLessThan(before * 0.6);
  });

  it('keeps the usage rollups past the raw rows, until rollup_retention', async () => {
    const database = setup.gateway.gateway.database;
    const account = await database.db
      .selectFrom('accounts')
      .select('id')
      .where('name', '=', 'acme')
      .executeTakeFirstOrThrow();
    const now = Date.now();
    const hourOf = (time: number) => Math.floor(time / 3_600_000) * 3_600_000;
    const recentOld = hourOf(now - 45 * day) + 10_000;
    const veryOld = hourOf(now - 55 * day) + 10_000;
    const write = createRequestLogBatchWriter(database);
    await write(RowBatch.of(rows(300, recentOld, account.id)));
    await write(RowBatch.of(rows(200, veryOld, account.id)));
    // A second account, with older rows still: retention finds each account's oldest period on its own.
    const second = 'acct_retention_second';
    await write(RowBatch.of(rows(70, veryOld - 3 * day, second)));
    await write(RowBatch.of(rows(40, recentOld, second)));
    const rolledUp = async (periodStart: number) => {
      const row = await database.db
        .selectFrom('usage_hourly')
        .select((select) => select.fn.sum<number>('requests').as('requests'))
        .where('account_id', '=', account.id)
        .where('period_start', '=', periodStart)
        .executeTakeFirst();
      return Number(row?.requests ?? 0);
    };
    expect(await rolledUp(hourOf(recentOld))).toBe(300);
    expect(await rolledUp(hourOf(veryOld))).toBe(200);

    await applyRetention(
      {
        database,
        logger: createLogger('silent'),
        retentionMs: 30 * day,
        rollupRetentionMs: 50 * day,
        batchSize: 2000,
      },
      now,
    );
    const rawLeft = await database.db
      .selectFrom('request_log')
      .select((select) => select.fn.countAll<number>().as('n'))
      .where('created_at', 'in', [recentOld, veryOld])
      .executeTakeFirstOrThrow();
    expect(Number(rawLeft.n)).toBe(0);
    // The raw rows of 45 days ago are gone, their hour's usage is not; 55 days ago is past rollup_retention.
    expect(await rolledUp(hourOf(recentOld))).toBe(300);
    expect(await rolledUp(hourOf(veryOld))).toBe(0);
    // rollup_retention applies to every rollup, the narrower ones (kept beside usage_hourly and usage_daily) too.
    for (const shape of rollupShapes) {
      for (const table of [shape.tables.hour, shape.tables.day]) {
        const old = await database.db
          .selectFrom(table as 'usage_daily')
          .select((select) => select.fn.countAll<number>().as('n'))
          .where('period_start', '<', now - 51 * day)
          .executeTakeFirstOrThrow();
        expect(Number(old.n), table).toBe(0);
      }
    }
    const secondLeft = await database.db
      .selectFrom('usage_hourly')
      .select((select) => select.fn.sum<number>('requests').as('requests'))
      .where('account_id', '=', second)
      .executeTakeFirst();
    expect(Number(secondLeft?.requests)).toBe(40);
    const kept = await database.db
      .selectFrom('usage_account_hourly')
      .select('requests')
      .where('account_id', '=', account.id)
      .where('period_start', '=', hourOf(recentOld))
      .executeTakeFirst();
    expect(Number(kept?.requests)).toBe(300);
  });

  it.skipIf(testEngine !== 'postgres')(
    "creates the coming days' partitions so new rows never land in the default one",
    async () => {
      const database = setup.gateway.gateway.database;
      const result = await sql<{ name: string }>`
      select child.relname as name from pg_inherits
      join pg_class child on child.oid = pg_inherits.inhrelid
      where pg_inherits.inhparent = 'request_log'::regclass`.execute(database.db);
      const names = result.rows.map((row) => row.name);
      const today = `request_log_p${new Date().toISOString().slice(0, 10).replaceAll('-', '')}`;
      expect(names).toContain(today);
      expect(names.filter((name) => name.startsWith('request_log_p')).length).toBeGreaterThanOrEqual(8);
    },
  );
});
