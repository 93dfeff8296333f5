/**
 * The layout of the usage rollups (`usage_hourly`, `usage_daily`, migration 0010, and the narrower ones of migration
 * 0013): which columns a rollup row has, and the latency histogram each row carries so that p50/p95 can be read from
 * rollups without the log's rows. Shared by the migrations, the log writers (which keep the rollups in step with every
 * batch) and the readers. The bounds are part of the stored data: changing them needs a new migration and a rebuild.
 */

/** The widest rollups: per account, period, key, model, endpoint and provider. */
export const rollupTables = { hour: 'usage_hourly', day: 'usage_daily' } as const;
export type RollupPeriod = keyof typeof rollupTables;
export const rollupPeriodMs = { hour: 3_600_000, day: 86_400_000 } as const;

/** What a rollup row can be identified by besides its period. */
export type RollupDimension = 'account_id' | 'key_id' | 'model' | 'endpoint' | 'provider';

/** A rollup: which dimensions it keeps (the others summed away), and its table for each period. */
export interface RollupShape {
  name: string;
  dimensions: readonly RollupDimension[];
  tables: Readonly<Record<RollupPeriod, string>>;
  /** The primary key: the account (where kept) and the period first, so a report reads one range. */
  keyColumns: readonly string[];
}

function defineShape(name: string, dimensions: RollupDimension[], tables: Record<RollupPeriod, string>): RollupShape {
  const rest = dimensions.filter((dimension) => dimension !== 'account_id');
  const keyColumns = [...(dimensions.includes('account_id') ? ['account_id'] : []), 'period_start', ...rest];
  return { name, dimensions, tables, keyColumns };
}

/** Every dimension: the rollup the log writers compute first and the others are summed from. */
export const keyRollup = defineShape('key', ['account_id', 'key_id', 'model', 'endpoint', 'provider'], rollupTables);

/**
 * Every rollup, from the one with the fewest rows per period to the one with the most: a report reads the first one
 * that keeps every dimension it filters or groups by (narrowestRollup). Across accounts, per model, endpoint and
 * provider: a few dozen rows an hour; per account alone: one row per active account; per account without the key:
 * the key rollup's rows divided by the keys in use.
 */
export const globalRollup = defineShape('global', ['model', 'endpoint', 'provider'], {
  hour: 'usage_global_hourly',
  day: 'usage_global_daily',
});
export const accountRollup = defineShape('account', ['account_id'], {
  hour: 'usage_account_hourly',
  day: 'usage_account_daily',
});
export const modelRollup = defineShape('model', ['account_id', 'model', 'endpoint', 'provider'], {
  hour: 'usage_model_hourly',
  day: 'usage_model_daily',
});
export const rollupShapes: readonly RollupShape[] = [globalRollup, accountRollup, modelRollup, keyRollup];

/** The first rollup of rollupShapes that keeps every dimension of `needed` (the key rollup keeps them all). */
export function narrowestRollup(needed: readonly RollupDimension[]): RollupShape {
  return rollupShapes.find((shape) => needed.every((dimension) => shape.dimensions.includes(dimension))) ?? keyRollup;
}

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

/** The columns that identify a key rollup row (its primary key), in key order: account first, then the period. */
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
