import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DatabaseHandle, migrateToLatest, migratorFor } from '../src/db/connect.js';
import { rollupFor } from '../src/db/repositories/usage.js';
import { rebuildKeyRollups, rebuildUsageRollups } from '../src/db/repositories/usage-rollups.js';
import {
  keyRollup,
  latencyBucketBounds,
  latencyBucketCount,
  type RollupShape,
  rollupShapes,
} from '../src/db/usage-rollup-layout.js';
import { createRequestLogBatchWriter } from '../src/request-log/batch-writer.js';
import { RowBatch } from '../src/request-log/row-batch.js';
import type { RequestLogInsert } from '../src/request-log/row-layout.js';
import { type OpenTestDatabase, openTestDatabase } from './support/database.js';

/**
 * Every usage rollup equals an aggregate of the log's rows, however rows arrive: random rows written through the
 * gateway's own batch writer in random batches, then each rollup table (the key rollup and the narrower ones) compared
 * with a plain recomputation from the rows, and again after `rebuild-rollups` recomputed them from the log.
 */

let opened: OpenTestDatabase;
let handle: DatabaseHandle;

beforeAll(async () => {
  opened = await openTestDatabase('rollups');
  handle = opened.handle;
});

afterAll(() => opened?.close());

const hour = 3_600_000;
const start = Date.UTC(2026, 0, 30, 20);

const day = 24 * hour;
const rowArbitrary = fc.record({
  createdAt: fc.integer({ min: start, max: start + 30 * hour }),
  account: fc.constantFrom('a', 'b'),
  key: fc.constantFrom('k1', 'k2'),
  model: fc.constantFrom('gpt', 'claude', ''),
  endpoint: fc.constantFrom('chat_completions', 'messages', 'models', 'embeddings', null),
  provider: fc.constantFrom('openai', 'anthropic', null),
  outcome: fc.constantFrom('success', 'success', 'error', 'cancelled'),
  latency: fc.oneof(fc.integer({ min: 0, max: 3000 }), fc.constantFrom(...latencyBucketBounds), fc.nat(400_000)),
  prompt: fc.option(fc.nat(5000)),
  completion: fc.option(fc.nat(5000)),
  cost: fc.option(fc.double({ min: 0, max: 2, noNaN: true })),
});
type GeneratedRow = typeof rowArbitrary extends fc.Arbitrary<infer Row> ? Row : never;

let run = 0;

/** `shift` moves a run's rows to days of their own: the rollup across accounts has no account to tell runs apart. */
function toInsert(row: GeneratedRow, index: number, prefix: string, shift = 0): RequestLogInsert {
  return {
    request_id: `req_${prefix}_${index}`,
    created_at: row.createdAt + shift,
    account_id: `${prefix}_${row.account}`,
    key_id: `${prefix}_${row.key}`,
    key_name: row.key,
    model: row.model,
    endpoint: row.endpoint,
    provider: row.provider,
    status: row.outcome === 'success' ? 200 : row.outcome === 'error' ? 502 : 499,
    outcome: row.outcome,
    stream: 0,
    usage_estimated: 0,
    latency_ms: row.latency,
    prompt_tokens: row.prompt,
    completion_tokens: row.completion,
    total_tokens: row.prompt === null || row.completion === null ? null : row.prompt + row.completion,
    cost_usd: row.cost,
  };
}

const timedEndpoints = new Set(['chat_completions', 'messages', 'embeddings', 'responses', 'completions']);

/** The rollup's identity of a row: its key columns, '' for the dimensions the rollup does not keep. */
function identityOf(shape: RollupShape, values: Record<string, unknown>): string {
  return ['account_id', 'period_start', 'key_id', 'model', 'endpoint', 'provider']
    .map((column) => (shape.keyColumns.includes(column) ? String(values[column] ?? '') : ''))
    .join('|');
}

/** A rollup recomputed from the rows, plainly: one entry per period and dimension the shape keeps. */
function expectedRollups(rows: RequestLogInsert[], periodMs: number, shape: RollupShape = keyRollup) {
  const expected = new Map<string, number[]>();
  for (const row of rows) {
    const period = Math.floor(row.created_at / periodMs) * periodMs;
    const identity = identityOf(shape, { ...row, period_start: period });
    const sums = expected.get(identity) ?? new Array(9 + latencyBucketCount).fill(0);
    const timed =
      row.outcome === 'success' && (row.endpoint ? timedEndpoints.has(row.endpoint) : row.model !== '') ? 1 : 0;
    let bucket = latencyBucketBounds.findIndex((bound) => row.latency_ms <= bound);
    if (bucket === -1) bucket = latencyBucketBounds.length;
    const values = [
      1,
      row.outcome === 'error' ? 1 : 0,
      row.outcome === 'cancelled' ? 1 : 0,
      row.prompt_tokens ?? 0,
      row.completion_tokens ?? 0,
      row.total_tokens ?? 0,
      row.cost_usd ?? 0,
      timed,
      timed ? row.latency_ms : 0,
    ];
    values.forEach((value, place) => {
      sums[place] += value;
    });
    if (timed) sums[9 + bucket] += 1;
    expected.set(identity, sums);
  }
  return expected;
}

/** A rollup table's rows of this run: its accounts (prefix_a and prefix_b), or across accounts its days. */
async function storedRollups(
  shape: RollupShape,
  period: 'hour' | 'day',
  prefix: string,
  days?: { from: number; to: number },
): Promise<Map<string, number[]>> {
  let select = handle.db.selectFrom(shape.tables[period] as 'usage_hourly').selectAll();
  if (shape.dimensions.includes('account_id'))
    select = select.where('account_id', '>=', `${prefix}_`).where('account_id', '<', `${prefix}_~`);
  else if (days) select = select.where('period_start', '>=', days.from).where('period_start', '<', days.to);
  else throw new Error('a rollup across accounts needs the days of the run');
  const rows = await select.execute();
  const stored = new Map<string, number[]>();
  for (const row of rows) {
    const record = row as unknown as Record<string, unknown>;
    const identity = identityOf(shape, { ...record, period_start: Number(record.period_start) });
    const columns = [
      'requests',
      'errors',
      'cancelled',
      'prompt_tokens',
      'completion_tokens',
      'total_tokens',
      'cost_usd',
      'latency_count',
      'latency_sum_ms',
      ...Array.from({ length: latencyBucketCount }, (_, index) => `lat_${index}`),
    ];
    stored.set(
      identity,
      columns.map((column) => Number(record[column])),
    );
  }
  return stored;
}

function expectEqualRollups(stored: Map<string, number[]>, expected: Map<string, number[]>): void {
  expect([...stored.keys()].sort()).toEqual([...expected.keys()].sort());
  for (const [identity, sums] of expected) {
    const actual = stored.get(identity) ?? [];
    sums.forEach((value, place) => {
      // Cost is a sum of fractions: equal up to the order of additions.
      if (place === 6) expect(actual[place]).toBeCloseTo(value, 9);
      else expect(actual[place], `${identity} column ${place}`).toBe(value);
    });
  }
}

describe('usage rollups', () => {
  it('are chosen per report: the narrowest keeping every dimension it filters or groups by', () => {
    const table = (query: Parameters<typeof rollupFor>[0]) => rollupFor(query).tables.hour;
    expect(table({ groupBy: 'none' })).toBe('usage_global_hourly');
    expect(table({ groupBy: 'model' })).toBe('usage_global_hourly');
    expect(table({ groupBy: 'provider' })).toBe('usage_global_hourly');
    expect(table({ groupBy: 'account' })).toBe('usage_account_hourly');
    expect(table({ groupBy: 'key' })).toBe('usage_hourly');
    expect(table({ accountId: 'a', groupBy: 'none' })).toBe('usage_account_hourly');
    expect(table({ accountId: 'a', groupBy: 'endpoint' })).toBe('usage_model_hourly');
    expect(table({ accountId: 'a', groupBy: 'key' })).toBe('usage_hourly');
    expect(table({ accountId: 'a', keyId: 'k', groupBy: 'model' })).toBe('usage_hourly');
    expect(rollupFor({ accountId: 'a', groupBy: 'model' }).tables.day).toBe('usage_model_daily');
  });

  it('equal an aggregate of the log rows, written in any batches, and again after a rebuild', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(rowArbitrary, { minLength: 1, maxLength: 120 }),
        fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 10 }),
        async (generated, batchSizes) => {
          const prefix = `run${run}`;
          // Three days per run (its rows span 30 hours from 20:00), after the days the migration test uses.
          const shift = (run + 1) * 3 * day;
          run++;
          const rows = generated.map((row, index) => toInsert(row, index, prefix, shift));
          const write = createRequestLogBatchWriter(handle);
          for (let first = 0, turn = 0; first < rows.length; turn++) {
            const size = batchSizes[turn % batchSizes.length] as number;
            await write(RowBatch.of(rows.slice(first, first + size)));
            first += size;
          }
          const days = {
            from: Math.floor((start + shift) / day) * day,
            to: Math.ceil((start + shift + 31 * hour) / day) * day,
          };
          const expectEveryRollup = async () => {
            for (const shape of rollupShapes) {
              expectEqualRollups(await storedRollups(shape, 'hour', prefix, days), expectedRollups(rows, hour, shape));
              expectEqualRollups(await storedRollups(shape, 'day', prefix, days), expectedRollups(rows, day, shape));
            }
          };
          await expectEveryRollup();

          await handle.db
            .transaction()
            .execute((transaction) =>
              rebuildUsageRollups(transaction, handle.dialect, { from: start + shift, to: start + shift + 31 * hour }),
            );
          await expectEveryRollup();
        },
      ),
      { numRuns: 25 },
    );
  });

  it('are built from the rows already logged when migration 0010 runs on an existing log', async () => {
    const migrator = migratorFor(handle);
    // Back to before the rollups, with rows logged then (written directly: the writers of that time had none).
    const down = await migrator.migrateTo('0009-account-security');
    expect(down.error).toBeUndefined();
    const rows = Array.from({ length: 300 }, (_, index) =>
      toInsert(
        {
          createdAt: start + index * 400_000,
          account: index % 2 === 0 ? 'a' : 'b',
          key: 'k1',
          model: index % 5 === 0 ? '' : 'gpt',
          endpoint: index % 5 === 0 ? 'models' : 'chat_completions',
          provider: index % 5 === 0 ? null : 'openai',
          outcome: index % 11 === 0 ? 'error' : 'success',
          latency: (index * 37) % 5000,
          prompt: index,
          completion: 2 * index,
          cost: index / 1000,
        },
        index,
        'migrated',
      ),
    );
    await handle.db.insertInto('request_log').values(rows).execute();
    // The rows of the property runs (later days) stay in the log and the rollups: only the migrated days are compared.
    const days = { from: Math.floor(start / day) * day, to: Math.floor(start / day) * day + 3 * day };
    await migrateToLatest(handle);
    for (const shape of rollupShapes) {
      expectEqualRollups(await storedRollups(shape, 'hour', 'migrated', days), expectedRollups(rows, hour, shape));
      expectEqualRollups(await storedRollups(shape, 'day', 'migrated', days), expectedRollups(rows, day, shape));
    }
  });

  it('are filled from the key rollup by migration 0013, history older than the log included', async () => {
    const migrator = migratorFor(handle);
    const down = await migrator.migrateTo('0012-usage-daily-spend-index');
    expect(down.error).toBeUndefined();
    // Rows logged before 0013, then their raw rows deleted (retention): the key rollup alone still holds them.
    const shift = -30 * day;
    const rows = Array.from({ length: 200 }, (_, index) =>
      toInsert(
        {
          createdAt: start + index * 500_000,
          account: index % 3 === 0 ? 'a' : 'b',
          key: index % 2 === 0 ? 'k1' : 'k2',
          model: index % 7 === 0 ? '' : index % 2 === 0 ? 'gpt' : 'claude',
          endpoint: index % 7 === 0 ? 'models' : 'chat_completions',
          provider: index % 7 === 0 ? null : 'openai',
          outcome: index % 13 === 0 ? 'cancelled' : 'success',
          latency: (index * 53) % 7000,
          prompt: index,
          completion: index + 1,
          cost: index / 700,
        },
        index,
        'before13',
        shift,
      ),
    );
    await handle.db.insertInto('request_log').values(rows).execute();
    await handle.db
      .transaction()
      .execute((transaction) =>
        rebuildKeyRollups(transaction, handle.dialect, { from: start + shift, to: start + shift + 30 * hour }),
      );
    await handle.db.deleteFrom('request_log').where('account_id', 'like', 'before13_%').execute();
    await migrateToLatest(handle);
    const days = {
      from: Math.floor((start + shift) / day) * day,
      to: Math.floor((start + shift) / day) * day + 3 * day,
    };
    for (const shape of rollupShapes) {
      expectEqualRollups(await storedRollups(shape, 'hour', 'before13', days), expectedRollups(rows, hour, shape));
      expectEqualRollups(await storedRollups(shape, 'day', 'before13', days), expectedRollups(rows, day, shape));
    }
  });
});
