import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { Database } from '../schema.js';

/**
 * Usage aggregates over the request log, per time bucket and optionally per key or model. Counts and sums are one
 * GROUP BY; latency percentiles are exact (nearest rank) from window functions (row_number and count over each
 * group), which SQLite and PostgreSQL both have, so both engines give the same numbers.
 */

export type UsageGroupBy = 'none' | 'key' | 'model';

export interface UsageQuery {
  accountId: string;
  /** Inclusive, ms; aligned to a bucket start by the caller. */
  from: number;
  /** Exclusive, ms. */
  to: number;
  bucketMs: number;
  /** Minutes added to UTC to get the viewer's local time, so days start at local midnight. */
  offsetMinutes: number;
  groupBy: UsageGroupBy;
}

export interface UsageAggregateRow {
  bucket: number;
  groupId: string | null;
  groupName: string | null;
  requests: number;
  errors: number;
  cancelled: number;
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  costUsd: number;
}

export interface LatencyPercentileRow {
  /** null for whole-range rows. */
  bucket: number | null;
  groupId: string | null;
  p50: number | null;
  p95: number | null;
}

/**
 * The bucket number of a row: whole buckets since the epoch in the viewer's time zone. The bucket size and offset
 * are validated integers inlined as literals, so both engines do integer division on integers (a bound parameter
 * would reach SQLite as a float).
 */
function bucketExpression(query: UsageQuery): RawBuilder<number> {
  const offsetMs = Math.round(query.offsetMinutes) * 60_000;
  return sql<number>`((created_at + ${sql.lit(offsetMs)}) / ${sql.lit(Math.round(query.bucketMs))})`;
}

/** The grouping column, or undefined when not grouped (PostgreSQL refuses constants in GROUP BY). */
function groupExpression(query: UsageQuery): RawBuilder<string> | undefined {
  if (query.groupBy === 'key') return sql<string>`key_id`;
  if (query.groupBy === 'model') return sql<string>`model`;
  return undefined;
}

const toNumber = (value: unknown): number => (value === null || value === undefined ? 0 : Number(value));

export async function aggregateUsage(db: Kysely<Database>, query: UsageQuery): Promise<UsageAggregateRow[]> {
  const bucket = bucketExpression(query);
  const group = groupExpression(query);
  const groupColumn: RawBuilder<string | null> = group ?? sql<null>`null`;
  const groupName: RawBuilder<string | null> = query.groupBy === 'key' ? sql<string>`max(key_name)` : sql<null>`null`;
  const rows = await db
    .selectFrom('request_log')
    .select([
      bucket.as('bucket'),
      groupColumn.as('group_id'),
      groupName.as('group_name'),
      sql<number>`count(*)`.as('requests'),
      sql<number>`sum(case when outcome = 'error' then 1 else 0 end)`.as('errors'),
      sql<number>`sum(case when outcome = 'cancelled' then 1 else 0 end)`.as('cancelled'),
      sql<number>`sum(prompt_tokens)`.as('prompt_tokens'),
      sql<number>`sum(completion_tokens)`.as('completion_tokens'),
      sql<number>`sum(total_tokens)`.as('total_tokens'),
      sql<number>`sum(cost_usd)`.as('cost_usd'),
    ])
    .where('account_id', '=', query.accountId)
    .where('created_at', '>=', query.from)
    .where('created_at', '<', query.to)
    .groupBy(group ? [bucket, group] : [bucket])
    .execute();
  return rows.map((row) => ({
    bucket: toNumber(row.bucket),
    groupId: row.group_id === null ? null : String(row.group_id),
    groupName: row.group_name === null ? null : String(row.group_name),
    requests: toNumber(row.requests),
    errors: toNumber(row.errors),
    cancelled: toNumber(row.cancelled),
    promptTokens: toNumber(row.prompt_tokens),
    completionTokens: toNumber(row.completion_tokens),
    totalTokens: toNumber(row.total_tokens),
    costUsd: toNumber(row.cost_usd),
  }));
}

/**
 * p50 and p95 latency of successful requests, per (bucket, group) when perBucket, else per group over the whole
 * range. Nearest rank: the p-th percentile of n sorted values is the value at position ceil(p * n / 100), i.e. the
 * smallest value whose position satisfies position * 100 >= p * n.
 */
export async function latencyPercentiles(
  db: Kysely<Database>,
  query: UsageQuery,
  perBucket: boolean,
  grouped: boolean,
): Promise<LatencyPercentileRow[]> {
  const bucket = perBucket ? bucketExpression(query) : undefined;
  const group = grouped ? groupExpression(query) : undefined;
  const bucketColumn: RawBuilder<number | null> = bucket ?? sql<null>`null`;
  const groupColumn: RawBuilder<string | null> = group ?? sql<null>`null`;
  const partitions = [bucket, group].filter((expression) => expression !== undefined);
  const partitionBy = partitions.length > 0 ? sql`partition by ${sql.join(partitions)}` : sql``;
  const ranked = db
    .selectFrom('request_log')
    .select([
      bucketColumn.as('bucket'),
      groupColumn.as('group_id'),
      'latency_ms',
      sql<number>`row_number() over (${partitionBy} order by latency_ms)`.as('position'),
      sql<number>`count(*) over (${partitionBy})`.as('size'),
    ])
    .where('account_id', '=', query.accountId)
    .where('created_at', '>=', query.from)
    .where('created_at', '<', query.to)
    .where('outcome', '=', 'success');
  let outer = db
    .selectFrom(ranked.as('ranked'))
    .select([
      (bucket ? sql<number | null>`bucket` : sql<number | null>`null`).as('bucket'),
      (group ? sql<string | null>`group_id` : sql<string | null>`null`).as('group_id'),
      sql<number | null>`min(case when position * 100 >= size * 50 then latency_ms end)`.as('p50'),
      sql<number | null>`min(case when position * 100 >= size * 95 then latency_ms end)`.as('p95'),
    ]);
  const groupColumns = [...(bucket ? [sql`bucket`] : []), ...(group ? [sql`group_id`] : [])];
  if (groupColumns.length > 0) outer = outer.groupBy(groupColumns);
  const rows = await outer.execute();
  return rows
    .filter((row) => row.p50 !== null || groupColumns.length > 0)
    .map((row) => ({
      bucket: row.bucket === null ? null : Number(row.bucket),
      groupId: row.group_id === null ? null : String(row.group_id),
      p50: row.p50 === null ? null : Number(row.p50),
      p95: row.p95 === null ? null : Number(row.p95),
    }));
}
