/**
 * The layout of the usage rollups (`usage_hourly`, `usage_daily`, migration 0010): which columns a rollup row has,
 * and the latency histogram each row carries so that p50/p95 can be read from rollups without the log's rows.
 * Shared by the migration, the log writers (which keep the rollups in step with every batch) and the readers.
 * The bounds are part of the stored data: changing them needs a new migration and a rebuild.
 */

export const rollupTables = { hour: 'usage_hourly', day: 'usage_daily' } as const;
export type RollupPeriod = keyof typeof rollupTables;
export const rollupPeriodMs = { hour: 3_600_000, day: 86_400_000 } as const;

/**
 * Upper bounds (inclusive, ms) of the latency histogram's buckets; one more bucket holds everything slower.
 * Steps of roughly 1.25-1.5x, so a percentile read from them is within a quarter of its bucket's width.
 */
export const latencyBucketBounds: readonly number[] = [
  10, 25, 50, 75, 100, 150, 200, 300, 400, 500, 650, 800, 1000, 1300, 1600, 2000, 2500, 3200, 4000, 5000, 6500, 8000,
  10_000, 13_000, 16_000, 20_000, 30_000, 45_000, 60_000, 120_000,
];
export const latencyBucketCount = latencyBucketBounds.length + 1;
export const latencyBucketColumns: readonly string[] = Array.from(
  { length: latencyBucketCount },
  (_, index) => `lat_${index}`,
);

/** The columns that identify a rollup row (its primary key), in key order: account first, then the period. */
export const rollupKeyColumns = ['account_id', 'period_start', 'key_id', 'model', 'endpoint', 'provider'] as const;

/** The columns a rollup row sums. cost_usd is a fraction; every other one counts. */
export const rollupSumColumns: readonly string[] = [
  'requests',
  'errors',
  'cancelled',
  'prompt_tokens',
  'completion_tokens',
  'total_tokens',
  'cost_usd',
  'latency_count',
  'latency_sum_ms',
  ...latencyBucketColumns,
];

/**
 * Endpoints that call a model. Only their successful requests count in latency figures: a model list or a stored
 * response read answers in a millisecond and would drag p50/p95 down. Rows logged before the endpoint column existed
 * (null endpoint) count when they name a model.
 */
export const inferenceEndpoints: readonly string[] = [
  'chat_completions',
  'responses',
  'messages',
  'embeddings',
  'completions',
];

/** The histogram bucket of a latency. */
export function latencyBucketOf(latencyMs: number): number {
  const bounds = latencyBucketBounds;
  for (let index = 0; index < bounds.length; index++) if (latencyMs <= (bounds[index] as number)) return index;
  return bounds.length;
}
