import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config/loader.js';
import { type DatabaseHandle, openDatabase } from '../src/db/connect.js';
import { rebuildUsageRollups } from '../src/db/repositories/usage-rollups.js';
import { latencyBucketBounds, latencyBucketCount } from '../src/db/usage-rollup-layout.js';
import { createRequestLogBatchWriter } from '../src/request-log/batch-writer.js';
import { RowBatch } from '../src/request-log/row-batch.js';
import type { RequestLogInsert } from '../src/request-log/row-layout.js';
import { createTestDatabase, type TestDatabase } from './support/database.js';

/**
 * The usage rollups equal an aggregate of the log's rows, however rows arrive: random rows written through the
 * gateway's own batch writer in random batches, then the rollup tables compared with a plain recomputation from the
 * rows, and again after `rebuild-rollups` recomputed them from the log.
 */

let database: TestDatabase;
let handle: DatabaseHandle;
let dataDir: string;

beforeAll(async () => {
  database = await createTestDatabase();
  dataDir = mkdtempSync(path.join(tmpdir(), 'switchboard-rollups-'));
  const config = parseConfig(
    {
      ...(database.url ? { database: { url: database.url } } : {}),
      server: { data_dir: dataDir },
      providers: [{ name: 'mock', type: 'openai', base_url: 'http://127.0.0.1:9/v1' }],
      models: [{ name: 'mock', provider: 'mock' }],
    },
    'test',
  );
  handle = await openDatabase(config);
});

afterAll(async () => {
  await handle?.close();
  await database?.drop();
  rmSync(dataDir, { recursive: true, force: true });
});

const hour = 3_600_000;
const start = Date.UTC(2026, 0, 30, 20);

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

function toInsert(row: GeneratedRow, index: number, prefix: string): RequestLogInsert {
  return {
    request_id: `req_${prefix}_${index}`,
    created_at: row.createdAt,
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

/** The rollups recomputed from the rows, plainly: one entry per account, period, key, model, endpoint, provider. */
function expectedRollups(rows: RequestLogInsert[], periodMs: number): Map<string, number[]> {
  const expected = new Map<string, number[]>();
  for (const row of rows) {
    const period = Math.floor(row.created_at / periodMs) * periodMs;
    const identity = [row.account_id, period, row.key_id, row.model, row.endpoint ?? '', row.provider ?? ''].join('|');
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

async function storedRollups(table: 'usage_hourly' | 'usage_daily', prefix: string): Promise<Map<string, number[]>> {
  const rows = await handle.db
    .selectFrom(table)
    .selectAll()
    // This run's accounts only: prefix_a and prefix_b.
    .where('account_id', '>=', `${prefix}_`)
    .where('account_id', '<', `${prefix}_~`)
    .execute();
  const stored = new Map<string, number[]>();
  for (const row of rows) {
    const record = row as unknown as Record<string, unknown>;
    const identity = [row.account_id, Number(row.period_start), row.key_id, row.model, row.endpoint, row.provider].join(
      '|',
    );
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
  it('equal an aggregate of the log rows, written in any batches, and again after a rebuild', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(rowArbitrary, { minLength: 1, maxLength: 120 }),
        fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 10 }),
        async (generated, batchSizes) => {
          const prefix = `run${run++}`;
          const rows = generated.map((row, index) => toInsert(row, index, prefix));
          const write = createRequestLogBatchWriter(handle);
          for (let first = 0, turn = 0; first < rows.length; turn++) {
            const size = batchSizes[turn % batchSizes.length] as number;
            await write(RowBatch.of(rows.slice(first, first + size)));
            first += size;
          }
          const hourly = expectedRollups(rows, hour);
          const daily = expectedRollups(rows, 24 * hour);
          expectEqualRollups(await storedRollups('usage_hourly', prefix), hourly);
          expectEqualRollups(await storedRollups('usage_daily', prefix), daily);

          await handle.db
            .transaction()
            .execute((transaction) =>
              rebuildUsageRollups(transaction, handle.dialect, { from: start, to: start + 31 * hour }),
            );
          expectEqualRollups(await storedRollups('usage_hourly', prefix), hourly);
          expectEqualRollups(await storedRollups('usage_daily', prefix), daily);
        },
      ),
      { numRuns: 25 },
    );
  });
});
