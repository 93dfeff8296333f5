import { type CompiledQuery, type Kysely, type RawBuilder, sql } from 'kysely';
import type { ArrayReader } from '../array-reader.js';
import type { Dialect } from '../migrations/dialect.js';
import { rolledUpAccounts } from '../rollup-accounts.js';
import type { Database } from '../schema.js';
import {
  accountRollup,
  latencyBucketColumns,
  narrowestRollup,
  type RollupDimension,
  type RollupPeriod,
  type RollupShape,
  rollupPeriodMs,
  rollupTables,
} from '../usage-rollup-layout.js';

/**
 * The raw material of usage reports, read from the usage rollups rather than the log: one GROUP BY over a range of
 * the narrowest rollup that keeps what the report filters and groups by (usage-rollup-layout.ts), by time bucket and
 * by key, model, endpoint, provider or account. A 30-day report reads a few thousand rows where the log holds millions.
 */

export type UsageGroupBy = 'none' | 'key' | 'model' | 'endpoint' | 'provider' | 'account';

export interface UsageRollupQuery {
  /** Absent for the operator's view across accounts. */
  accountId?: string | undefined;
  keyId?: string | undefined;
  /** Which rollup to read: days (UTC) or hours. */
  period: RollupPeriod;
  /** Inclusive, ms: rows whose period starts at or after it. */
  from: number;
  /** Exclusive, ms. */
  to: number;
  /** Time buckets of the result, or undefined for totals only. */
  bucketMs?: number | undefined;
  /** Milliseconds added to UTC to get the viewer's local time, so days start at local midnight. */
  offsetMs?: number;
  /** The engine: across accounts, SQLite reads account by account (rolledUpAccounts); PostgreSQL does not need to. */
  dialect?: Dialect | undefined;
  /** The database's reader of rows as arrays (DatabaseHandle.readArrays), where at hand: faster for 42 columns. */
  readArrays?: ArrayReader | undefined;
  /** Only rows whose period starts within [from, to) ms of its UTC day (hourly rows at some hours of each day). */
  timeOfDay?: { from: number; to: number } | undefined;
  groupBy: UsageGroupBy;
}

/** What the usage reports add up, in every grouping. */
export interface UsageCounts {
  requests: number;
  errors: number;
  cancelled: number;
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  costUsd: number;
}

export interface UsageSums extends UsageCounts {
  /** Successful model calls: the requests latency figures are computed over. */
  latencyCount: number;
  latencySumMs: number;
  /** Timed requests per latency bucket (latencyBucketBounds). */
  latencyHistogram: number[];
}

export interface UsageGroupRow extends UsageSums {
  /** Whole buckets since the epoch (local time); null without bucketMs. */
  bucket: number | null;
  groupId: string | null;
}

const groupColumns: Record<Exclude<UsageGroupBy, 'none'>, RollupDimension> = {
  key: 'key_id',
  model: 'model',
  endpoint: 'endpoint',
  provider: 'provider',
  account: 'account_id',
};

const toNumber = (value: unknown): number => (value === null || value === undefined ? 0 : Number(value));

/** The rollup a query reads: the narrowest one keeping every dimension it filters or groups by. */
export function rollupFor(query: Pick<UsageRollupQuery, 'accountId' | 'keyId' | 'groupBy'>): RollupShape {
  const needed: RollupDimension[] = [];
  if (query.accountId !== undefined) needed.push('account_id');
  if (query.keyId !== undefined) needed.push('key_id');
  if (query.groupBy !== 'none') needed.push(groupColumns[query.groupBy]);
  return narrowestRollup(needed);
}

export async function usageRollupGroups(db: Kysely<Database>, query: UsageRollupQuery): Promise<UsageGroupRow[]> {
  const shape = rollupFor(query);
  // Typed as the key rollup, whose columns include every other rollup's: the query names only the ones kept.
  const table = shape.tables[query.period] as typeof rollupTables.hour;
  // Bucket size and offset are validated integers inlined as literals, so both engines divide integers.
  const bucket: RawBuilder<number> | undefined =
    query.bucketMs === undefined
      ? undefined
      : sql<number>`((period_start + ${sql.lit(Math.round(query.offsetMs ?? 0))}) / ${sql.lit(Math.round(query.bucketMs))})`;
  const group = query.groupBy === 'none' ? undefined : sql.ref(groupColumns[query.groupBy]);
  const histogram = latencyBucketColumns.map((column) => sql<number>`sum(${sql.ref(column)})`.as(column));
  let select = db
    .selectFrom(table)
    .select([
      ((bucket ?? sql`null`) as RawBuilder<number | null>).as('bucket'),
      ((group ?? sql`null`) as RawBuilder<string | null>).as('group_id'),
      sql<number>`sum(requests)`.as('requests'),
      sql<number>`sum(errors)`.as('errors'),
      sql<number>`sum(cancelled)`.as('cancelled'),
      sql<number>`sum(prompt_tokens)`.as('prompt_tokens'),
      sql<number>`sum(completion_tokens)`.as('completion_tokens'),
      sql<number>`sum(total_tokens)`.as('total_tokens'),
      sql<number>`sum(cost_usd)`.as('cost_usd'),
      sql<number>`sum(latency_count)`.as('latency_count'),
      sql<number>`sum(latency_sum_ms)`.as('latency_sum_ms'),
      ...histogram,
    ])
    .where('period_start', '>=', query.from)
    .where('period_start', '<', query.to);
  if (query.accountId !== undefined) select = select.where('account_id', '=', query.accountId);
  else if (query.dialect === 'sqlite' && shape.dimensions.includes('account_id'))
    select = select.where('account_id', 'in', rolledUpAccounts(table));
  if (query.keyId !== undefined) select = select.where('key_id', '=', query.keyId);
  if (query.timeOfDay !== undefined) {
    const timeOfDay = sql<number>`(period_start % ${sql.lit(rollupPeriodMs.day)})`;
    select = select
      .where(timeOfDay, '>=', sql.lit(Math.round(query.timeOfDay.from)))
      .where(timeOfDay, '<', sql.lit(Math.round(query.timeOfDay.to)));
  }
  // A bucket the size of the rollup's period holds one period: grouped by the period itself (the primary key's order
  // after the account), SQLite sums rows as they come instead of sorting them first (docs/performance.md).
  const byPeriod = bucket !== undefined && query.bucketMs === rollupPeriodMs[query.period];
  const grouping = [byPeriod ? sql.ref('period_start') : bucket, group].filter((item) => item !== undefined);
  // PostgreSQL refuses constants in GROUP BY; with neither, the aggregate is one row.
  if (grouping.length > 0) select = select.groupBy(grouping);
  return (await rowsAsArrays(db, select.compile(), query.readArrays)).map(groupRowOf).filter((row) => row.requests > 0);
}

/** A query's rows as arrays of values in select order: from the array reader if given, else from Kysely's objects. */
async function rowsAsArrays(
  db: Kysely<Database>,
  compiled: CompiledQuery,
  readArrays: ArrayReader | undefined,
): Promise<unknown[][]> {
  if (readArrays) return readArrays(compiled);
  const { rows } = await db.executeQuery<Record<string, unknown>>(compiled);
  return rows.map((row) => Object.values(row));
}

/** The columns usageRollupGroups selects, in order: bucket, group, the sums, then the latency histogram. */
const sumColumnCount = 11;

function groupRowOf(values: unknown[]): UsageGroupRow {
  const histogram = new Array<number>(latencyBucketColumns.length);
  for (let index = 0; index < histogram.length; index++) histogram[index] = toNumber(values[sumColumnCount + index]);
  const [bucket, groupId] = values;
  return {
    bucket: bucket === null ? null : toNumber(bucket),
    groupId: groupId === null || groupId === undefined ? null : String(groupId),
    requests: toNumber(values[2]),
    errors: toNumber(values[3]),
    cancelled: toNumber(values[4]),
    promptTokens: toNumber(values[5]),
    completionTokens: toNumber(values[6]),
    totalTokens: toNumber(values[7]),
    costUsd: toNumber(values[8]),
    latencyCount: toNumber(values[9]),
    latencySumMs: toNumber(values[10]),
    latencyHistogram: histogram,
  };
}

export interface AccountSpend {
  accountId: string;
  requests: number;
  errors: number;
  totalTokens: number;
  costUsd: number;
}

/**
 * Each account's requests, errors, tokens and spend over whole UTC days [from, to): the operator's overview, from the
 * rollup per account and day (one row per account and day). On SQLite, read account by account along the primary
 * key, so each account's days are one range and rows arrive grouped.
 */
export async function spendByAccount(
  db: Kysely<Database>,
  from: number,
  to: number,
  dialect: Dialect,
): Promise<AccountSpend[]> {
  let select = db.selectFrom('usage_account_daily');
  if (dialect === 'sqlite') select = select.where('account_id', 'in', rolledUpAccounts('usage_account_daily'));
  const rows = await select
    .select([
      'account_id',
      sql<number>`sum(requests)`.as('requests'),
      sql<number>`sum(errors)`.as('errors'),
      sql<number>`sum(total_tokens)`.as('total_tokens'),
      sql<number>`sum(cost_usd)`.as('cost_usd'),
    ])
    .where('period_start', '>=', from)
    .where('period_start', '<', to)
    .groupBy('account_id')
    .execute();
  return rows.map((row) => ({
    accountId: row.account_id,
    requests: toNumber(row.requests),
    errors: toNumber(row.errors),
    totalTokens: toNumber(row.total_tokens),
    costUsd: toNumber(row.cost_usd),
  }));
}

/**
 * Dollars an account or a key has spent since `since` (budgets), from the rollups: the daily rows for whole days,
 * the hourly rows for the rest. Budget periods start at whole UTC hours, so the sum is exactly the log's.
 */
export async function sumSpend(
  db: Kysely<Database>,
  subject: { accountId: string } | { keyId: string },
  since: number,
): Promise<number> {
  const day = rollupPeriodMs.day;
  const hour = rollupPeriodMs.hour;
  const firstWholeDay = Math.ceil(since / day) * day;
  const ranges: Array<[RollupPeriod, number, number]> = [
    ['hour', Math.floor(since / hour) * hour, firstWholeDay],
    ['day', firstWholeDay, Number.MAX_SAFE_INTEGER],
  ];
  let spent = 0;
  for (const [period, from, to] of ranges) {
    if (from >= to) continue;
    // An account's spend from the rollup per account alone (one row per period); a key's from the key rollup.
    let query = db
      .selectFrom(('accountId' in subject ? accountRollup.tables : rollupTables)[period] as typeof rollupTables.hour)
      .select(sql<number | string | null>`sum(cost_usd)`.as('spent'))
      .where('period_start', '>=', from)
      .where('period_start', '<', to);
    if ('accountId' in subject) {
      query = query.where('account_id', '=', subject.accountId);
    } else {
      // The key's account leads the rollups' primary key: the one way to reach a key's rows without a scan.
      const keyId = subject.keyId;
      query = query
        .where('account_id', '=', (select) =>
          select.selectFrom('api_keys').select('api_keys.account_id').where('api_keys.id', '=', keyId),
        )
        .where('key_id', '=', keyId);
    }
    const row = await query.executeTakeFirst();
    spent += Number(row?.spent ?? 0);
  }
  return spent;
}
