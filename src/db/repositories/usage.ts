import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { Database } from '../schema.js';

/**
 * The raw material of usage reports: the request log of one account over a time range, grouped by time bucket,
 * key or model, outcome, and (for successful requests) exact latency. One plain GROUP BY, which SQLite and
 * PostgreSQL run alike; the caller turns the groups into totals and exact percentiles (usage/usage-report.ts).
 * Grouping by latency keeps percentiles exact while returning far fewer rows than the log holds, since many
 * requests share a millisecond value.
 */

export type UsageGroupBy = 'none' | 'key' | 'model';

export interface UsageSlice {
  accountId: string;
  /** Inclusive, ms. */
  from: number;
  /** Exclusive, ms. */
  to: number;
  bucketMs: number;
  /** Minutes added to UTC to get the viewer's local time, so days start at local midnight. */
  offsetMinutes: number;
  groupBy: UsageGroupBy;
}

export interface UsageGroupRow {
  bucket: number;
  groupId: string | null;
  groupName: string | null;
  outcome: string;
  /** Latency of successful requests; -1 for the others (their latency is not part of any percentile). */
  latencyMs: number;
  requests: number;
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  costUsd: number;
}

/**
 * Whole buckets since the epoch in the viewer's time zone. Bucket size and offset are validated integers inlined as
 * literals, so both engines do integer division on integers (a bound parameter would reach SQLite as a float).
 */
function bucketExpression(slice: UsageSlice): RawBuilder<number> {
  const offsetMs = Math.round(slice.offsetMinutes) * 60_000;
  return sql<number>`((created_at + ${sql.lit(offsetMs)}) / ${sql.lit(Math.round(slice.bucketMs))})`;
}

const toNumber = (value: unknown): number => (value === null || value === undefined ? 0 : Number(value));

export async function usageGroups(db: Kysely<Database>, slice: UsageSlice): Promise<UsageGroupRow[]> {
  const bucket = bucketExpression(slice);
  // PostgreSQL refuses constants in GROUP BY, so an ungrouped report groups by bucket alone.
  const group: RawBuilder<string> | undefined =
    slice.groupBy === 'key' ? sql<string>`key_id` : slice.groupBy === 'model' ? sql<string>`model` : undefined;
  const latency = sql<number>`(case when outcome = 'success' then latency_ms else -1 end)`;
  const groupColumn: RawBuilder<string | null> = group ?? sql<null>`null`;
  const groupName: RawBuilder<string | null> = slice.groupBy === 'key' ? sql<string>`max(key_name)` : sql<null>`null`;
  const rows = await db
    .selectFrom('request_log')
    .select([
      bucket.as('bucket'),
      groupColumn.as('group_id'),
      groupName.as('group_name'),
      'outcome',
      latency.as('latency'),
      sql<number>`count(*)`.as('requests'),
      sql<number>`sum(prompt_tokens)`.as('prompt_tokens'),
      sql<number>`sum(completion_tokens)`.as('completion_tokens'),
      sql<number>`sum(total_tokens)`.as('total_tokens'),
      sql<number>`sum(cost_usd)`.as('cost_usd'),
    ])
    .where('account_id', '=', slice.accountId)
    .where('created_at', '>=', slice.from)
    .where('created_at', '<', slice.to)
    .groupBy(group ? [bucket, group, sql`outcome`, latency] : [bucket, sql`outcome`, latency])
    .execute();
  return rows.map((row) => ({
    bucket: toNumber(row.bucket),
    groupId: row.group_id === null ? null : String(row.group_id),
    groupName: row.group_name === null ? null : String(row.group_name),
    outcome: row.outcome,
    latencyMs: toNumber(row.latency),
    requests: toNumber(row.requests),
    promptTokens: toNumber(row.prompt_tokens),
    completionTokens: toNumber(row.completion_tokens),
    totalTokens: toNumber(row.total_tokens),
    costUsd: toNumber(row.cost_usd),
  }));
}
