import type { Kysely } from 'kysely';
import { type UsageGroupBy, type UsageGroupRow, usageGroups } from '../db/repositories/usage.js';
import type { Database } from '../db/schema.js';

/**
 * Usage reports (the console's Usage page): requests, errors, tokens, cost and latency p50/p95 per hour or day, for
 * a whole account or per key or model. Computed from the request log itself, so every count equals the number of
 * log rows the log API returns for the same range, and percentiles are exact (nearest rank over successful requests).
 *
 * The range is read in time slices, yielding to the event loop between them: with the embedded SQLite driver a
 * query runs on the main thread, and one query over a million rows would stall every request the server is serving
 * for seconds. Slices adapt to the log's density (a few thousand groups each), so a stall stays in the tens of
 * milliseconds whether the account logs ten requests a day or a million. Slices need not follow bucket boundaries:
 * rows of one bucket read in two slices are merged.
 */

export interface UsageTotals {
  requests: number;
  errors: number;
  cancelled: number;
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  costUsd: number;
  latencyP50Ms: number | null;
  latencyP95Ms: number | null;
}

export interface UsagePoint extends UsageTotals {
  start: string;
}

export interface UsageReport {
  from: string;
  to: string;
  bucket: 'hour' | 'day';
  groupBy: UsageGroupBy;
  totals: UsageTotals;
  series: Array<{ id: string | null; name: string | null; totals: UsageTotals; points: UsagePoint[] }>;
}

export interface UsageReportRequest {
  accountId: string;
  /** Bucket numbers (whole buckets since the epoch, local time): the first one included and the first one not. */
  firstBucket: number;
  endBucket: number;
  bucket: 'hour' | 'day';
  offsetMinutes: number;
  groupBy: UsageGroupBy;
}

export const bucketSizes = { hour: 3_600_000, day: 86_400_000 } as const;
/** Slice widths: start at two hours, then halve or double to keep each query's result near the target. */
const firstSliceMs = 2 * 3_600_000;
const smallestSliceMs = 60_000;
const largestSliceMs = 7 * 86_400_000;
const targetGroupsPerSlice = 1_000;

/** Latency value -> number of successful requests with it. */
type Histogram = Map<number, number>;

interface Accumulator {
  totals: UsageTotals;
  latencies: Histogram;
}

function emptyTotals(): UsageTotals {
  return {
    requests: 0,
    errors: 0,
    cancelled: 0,
    promptTokens: 0,
    completionTokens: 0,
    totalTokens: 0,
    costUsd: 0,
    latencyP50Ms: null,
    latencyP95Ms: null,
  };
}

function accumulator(): Accumulator {
  return { totals: emptyTotals(), latencies: new Map() };
}

function add(into: Accumulator, row: UsageGroupRow): void {
  const totals = into.totals;
  totals.requests += row.requests;
  if (row.outcome === 'error') totals.errors += row.requests;
  if (row.outcome === 'cancelled') totals.cancelled += row.requests;
  totals.promptTokens += row.promptTokens;
  totals.completionTokens += row.completionTokens;
  totals.totalTokens += row.totalTokens;
  totals.costUsd += row.costUsd;
  if (row.outcome === 'success')
    into.latencies.set(row.latencyMs, (into.latencies.get(row.latencyMs) ?? 0) + row.requests);
}

/** Nearest rank: the p-th percentile of n sorted values is the value at position ceil(p * n / 100). */
export function percentilesOf(histogram: Histogram, percentiles: readonly number[]): Array<number | null> {
  const values = [...histogram.entries()].sort((first, second) => first[0] - second[0]);
  const count = values.reduce((sum, [, times]) => sum + times, 0);
  if (count === 0) return percentiles.map(() => null);
  return percentiles.map((percentile) => {
    const rank = Math.max(1, Math.ceil((percentile / 100) * count));
    let seen = 0;
    for (const [value, times] of values) {
      seen += times;
      if (seen >= rank) return value;
    }
    return values.at(-1)?.[0] ?? null;
  });
}

function finish(accumulated: Accumulator): UsageTotals {
  const [p50, p95] = percentilesOf(accumulated.latencies, [50, 95]);
  return { ...accumulated.totals, latencyP50Ms: p50 ?? null, latencyP95Ms: p95 ?? null };
}

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

export async function buildUsageReport(db: Kysely<Database>, request: UsageReportRequest): Promise<UsageReport> {
  const bucketMs = bucketSizes[request.bucket];
  const offsetMs = request.offsetMinutes * 60_000;
  const startOf = (bucket: number) => bucket * bucketMs - offsetMs;
  const grouped = request.groupBy !== 'none';

  const overall = accumulator();
  const perSeries = new Map<
    string,
    { id: string | null; name: string | null; whole: Accumulator; buckets: Map<number, Accumulator> }
  >();
  if (!grouped) perSeries.set('', { id: null, name: null, whole: accumulator(), buckets: new Map() });

  const rangeEnd = startOf(request.endBucket);
  let sliceMs = firstSliceMs;
  for (let sliceStart = startOf(request.firstBucket); sliceStart < rangeEnd; ) {
    const sliceEnd = Math.min(rangeEnd, sliceStart + sliceMs);
    const rows = await usageGroups(db, {
      accountId: request.accountId,
      from: sliceStart,
      to: sliceEnd,
      bucketMs,
      offsetMinutes: request.offsetMinutes,
      groupBy: request.groupBy,
    });
    for (const row of rows) {
      add(overall, row);
      const key = row.groupId ?? '';
      let series = perSeries.get(key);
      if (!series) {
        series = { id: row.groupId, name: row.groupName ?? row.groupId, whole: accumulator(), buckets: new Map() };
        perSeries.set(key, series);
      }
      if (row.groupName !== null) series.name = row.groupName;
      add(series.whole, row);
      let inBucket = series.buckets.get(row.bucket);
      if (!inBucket) {
        inBucket = accumulator();
        series.buckets.set(row.bucket, inBucket);
      }
      add(inBucket, row);
    }
    sliceStart = sliceEnd;
    if (rows.length > targetGroupsPerSlice * 2) sliceMs = Math.max(smallestSliceMs, sliceMs / 2);
    else if (rows.length < targetGroupsPerSlice / 2) sliceMs = Math.min(largestSliceMs, sliceMs * 2);
    if (sliceStart < rangeEnd) await yieldToEventLoop();
  }

  return {
    from: new Date(startOf(request.firstBucket)).toISOString(),
    to: new Date(startOf(request.endBucket)).toISOString(),
    bucket: request.bucket,
    groupBy: request.groupBy,
    totals: finish(overall),
    series: [...perSeries.values()]
      .sort((first, second) => second.whole.totals.requests - first.whole.totals.requests)
      .map((series) => {
        const points: UsagePoint[] = [];
        for (let bucket = request.firstBucket; bucket < request.endBucket; bucket++) {
          const accumulated = series.buckets.get(bucket);
          points.push({
            start: new Date(startOf(bucket)).toISOString(),
            ...(accumulated ? finish(accumulated) : emptyTotals()),
          });
        }
        return { id: series.id, name: series.name, totals: finish(series.whole), points };
      }),
  };
}
