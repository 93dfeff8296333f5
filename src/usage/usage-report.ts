import type { Kysely } from 'kysely';
import type { ArrayReader } from '../db/array-reader.js';
import type { Dialect } from '../db/migrations/dialect.js';
import {
  type UsageCounts,
  type UsageGroupBy,
  type UsageGroupRow,
  type UsageSums,
  usageRollupGroups,
} from '../db/repositories/usage.js';
import type { Database } from '../db/schema.js';
import { latencyBucketBounds, latencyBucketCount } from '../db/usage-rollup-layout.js';
import { localDayGroups } from './local-days.js';

/**
 * Usage reports (the console's Usage page and the operator's overview): requests, errors, tokens, cost and latency
 * p50/p95 per hour or day, for a whole account or per key, model, endpoint or provider. Read from the usage rollups,
 * which equal the request log's rows (counts, tokens and cost are exact); latency percentiles come from each rollup
 * row's histogram and are exact to within their bucket (latencyBucketBounds), over successful model calls only.
 *
 * Hours read the hourly rollups; days read the daily ones, and local days the daily ones corrected by a few hours of
 * the hourly ones (local-days.ts; an hour belongs to the day it starts in, so in a time zone offset by a half hour,
 * days start at local 00:30).
 */

export interface UsageTotals extends UsageCounts {
  latencyP50Ms: number | null;
  latencyP95Ms: number | null;
}

export interface UsagePoint extends UsageTotals {
  start: string;
}

export interface UsageSeries {
  id: string | null;
  name: string | null;
  /** A name unique among the series (a key's display suffix added where two keys share a name). */
  label: string;
  totals: UsageTotals;
  points: UsagePoint[];
}

export interface UsageReport {
  from: string;
  to: string;
  bucket: 'hour' | 'day';
  groupBy: UsageGroupBy;
  totals: UsageTotals;
  series: UsageSeries[];
}

export interface UsageReportRequest {
  /** Absent for the operator's view across accounts. */
  accountId?: string | undefined;
  /** Bucket numbers (whole buckets since the epoch, local time): the first one included and the first one not. */
  firstBucket: number;
  endBucket: number;
  bucket: 'hour' | 'day';
  offsetMinutes: number;
  groupBy: UsageGroupBy;
  /** The engine, for the one query shaped for each (usageRollupGroups). */
  dialect?: Dialect | undefined;
  /** The database's reader of rows as arrays (usageRollupGroups). */
  readArrays?: ArrayReader | undefined;
}

export const bucketSizes = { hour: 3_600_000, day: 86_400_000 } as const;

/** What a group is called: the names of keys and accounts, labels for the empty values. */
export type GroupNames = (groupBy: UsageGroupBy, ids: readonly string[]) => Promise<Map<string, GroupName>>;
export interface GroupName {
  name: string;
  /** Told apart by it when names collide (a key's display form). */
  detail?: string;
}

/** Labels of a rollup's empty values: requests that named no model, rows without an endpoint or provider. */
const emptyLabels: Partial<Record<UsageGroupBy, string>> = {
  model: '(no model)',
  endpoint: '(unknown endpoint)',
  provider: '(no provider)',
};

function emptySums(): UsageSums {
  return {
    requests: 0,
    errors: 0,
    cancelled: 0,
    promptTokens: 0,
    completionTokens: 0,
    totalTokens: 0,
    costUsd: 0,
    latencyCount: 0,
    latencySumMs: 0,
    latencyHistogram: new Array(latencyBucketCount).fill(0),
  };
}

function add(into: UsageSums, row: UsageSums): void {
  into.requests += row.requests;
  into.errors += row.errors;
  into.cancelled += row.cancelled;
  into.promptTokens += row.promptTokens;
  into.completionTokens += row.completionTokens;
  into.totalTokens += row.totalTokens;
  into.costUsd += row.costUsd;
  into.latencyCount += row.latencyCount;
  into.latencySumMs += row.latencySumMs;
  for (let index = 0; index < latencyBucketCount; index++) {
    into.latencyHistogram[index] = (into.latencyHistogram[index] as number) + (row.latencyHistogram[index] as number);
  }
}

/**
 * The p-th percentile (nearest rank) read from a latency histogram: the bucket holding the rank, and within it a
 * linear interpolation between its bounds by the rank's position among the bucket's requests. The open-ended last
 * bucket reports its lower bound.
 */
export function histogramPercentile(histogram: readonly number[], percentile: number): number | null {
  return percentileAt(histogram, histogramCount(histogram), percentile);
}

function histogramCount(histogram: readonly number[]): number {
  let count = 0;
  for (const times of histogram) count += times;
  return count;
}

function percentileAt(histogram: readonly number[], count: number, percentile: number): number | null {
  if (count === 0) return null;
  const rank = Math.max(1, Math.ceil((percentile / 100) * count));
  let seen = 0;
  for (let index = 0; index < histogram.length; index++) {
    const inBucket = histogram[index] as number;
    if (seen + inBucket >= rank) {
      const lower = index === 0 ? 0 : (latencyBucketBounds[index - 1] as number);
      const upper = latencyBucketBounds[index];
      if (upper === undefined) return lower;
      return Math.round(lower + ((upper - lower) * (rank - seen)) / inBucket);
    }
    seen += inBucket;
  }
  return latencyBucketBounds.at(-1) ?? null;
}

function finish(sums: UsageSums): UsageTotals {
  const timed = histogramCount(sums.latencyHistogram);
  return {
    requests: sums.requests,
    errors: sums.errors,
    cancelled: sums.cancelled,
    promptTokens: sums.promptTokens,
    completionTokens: sums.completionTokens,
    totalTokens: sums.totalTokens,
    costUsd: sums.costUsd,
    latencyP50Ms: percentileAt(sums.latencyHistogram, timed, 50),
    latencyP95Ms: percentileAt(sums.latencyHistogram, timed, 95),
  };
}

const emptyTotals: Readonly<UsageTotals> = finish(emptySums());

/** A series' sums: over the whole range, and per bucket by its index from the first bucket (unset: no requests). */
interface SeriesSums {
  whole: UsageSums;
  buckets: Array<UsageSums | undefined>;
}

/**
 * Sums the rows per series and bucket in one pass. A row usually is its series' only one in its bucket and is kept
 * as it is; a second one there gets a sum of its own.
 */
function sumPerSeries(rows: readonly UsageGroupRow[], firstBucket: number, bucketCount: number) {
  const overall = emptySums();
  const perSeries = new Map<string | null, SeriesSums>();
  for (const row of rows) {
    add(overall, row);
    let series = perSeries.get(row.groupId);
    if (!series) {
      series = { whole: emptySums(), buckets: new Array(bucketCount) };
      perSeries.set(row.groupId, series);
    }
    add(series.whole, row);
    const index = (row.bucket ?? firstBucket) - firstBucket;
    const earlier = series.buckets[index];
    if (earlier === undefined) series.buckets[index] = row;
    else {
      const both = emptySums();
      add(both, earlier);
      add(both, row);
      series.buckets[index] = both;
    }
  }
  return { overall, perSeries };
}

/** A series' points, one per bucket, each starting at the bucket's time (`starts`, shared by every series). */
function pointsOf(series: SeriesSums, starts: readonly string[]): UsagePoint[] {
  const points = new Array<UsagePoint>(starts.length);
  for (let index = 0; index < starts.length; index++) {
    const sums = series.buckets[index];
    points[index] = { start: starts[index] as string, ...(sums ? finish(sums) : emptyTotals) };
  }
  return points;
}

export async function buildUsageReport(
  db: Kysely<Database>,
  request: UsageReportRequest,
  names?: GroupNames,
): Promise<UsageReport> {
  const bucketMs = bucketSizes[request.bucket];
  const offsetMs = request.offsetMinutes * 60_000;
  const startOf = (bucket: number) => bucket * bucketMs - offsetMs;
  const rows =
    request.bucket === 'day'
      ? await localDayGroups(db, { ...request, offsetMs })
      : await usageRollupGroups(db, {
          accountId: request.accountId,
          period: 'hour',
          from: startOf(request.firstBucket),
          to: startOf(request.endBucket),
          bucketMs,
          offsetMs,
          groupBy: request.groupBy,
          dialect: request.dialect,
          readArrays: request.readArrays,
        });

  const bucketCount = request.endBucket - request.firstBucket;
  const { overall, perSeries } = sumPerSeries(rows, request.firstBucket, bucketCount);
  if (request.groupBy === 'none' && perSeries.size === 0)
    perSeries.set(null, { whole: emptySums(), buckets: new Array(bucketCount) });
  const starts = Array.from({ length: bucketCount }, (_, index) =>
    new Date(startOf(request.firstBucket + index)).toISOString(),
  );

  const ids = [...perSeries.keys()].filter((id): id is string => id !== null && id !== '');
  const named = names && ids.length > 0 ? await names(request.groupBy, ids) : new Map<string, GroupName>();
  const nameOf = (id: string | null): GroupName | null => {
    if (id === null) return null;
    if (id === '') return { name: emptyLabels[request.groupBy] ?? '(none)' };
    return named.get(id) ?? { name: id };
  };
  const nameCounts = new Map<string, number>();
  for (const id of perSeries.keys()) {
    const name = nameOf(id)?.name;
    if (name !== undefined) nameCounts.set(name, (nameCounts.get(name) ?? 0) + 1);
  }

  return {
    from: new Date(startOf(request.firstBucket)).toISOString(),
    to: new Date(startOf(request.endBucket)).toISOString(),
    bucket: request.bucket,
    groupBy: request.groupBy,
    totals: finish(overall),
    series: [...perSeries.entries()]
      .sort(([, first], [, second]) => second.whole.requests - first.whole.requests)
      .map(([id, series]) => {
        const points = pointsOf(series, starts);
        const name = nameOf(id);
        const collides = name !== null && (nameCounts.get(name.name) ?? 0) > 1;
        const label =
          name === null ? 'All requests' : collides && name.detail ? `${name.name} (${name.detail})` : name.name;
        return { id, name: name?.name ?? null, label, totals: finish(series.whole), points };
      }),
  };
}
