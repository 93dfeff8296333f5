import { z } from 'zod';
import { authorizeAccount } from '../../access/account-access.js';
import {
  aggregateUsage,
  type LatencyPercentileRow,
  latencyPercentiles,
  type UsageAggregateRow,
  type UsageQuery,
} from '../../db/repositories/usage.js';
import { invalidRequest } from '../../server/errors.js';
import { timeParam } from './query-params.js';
import { defineRoute } from './route.js';
import { accountParams, type UsagePoint, type UsageTotals, type UsageView, usageSchema } from './schemas.js';

/**
 * Usage over time for the Usage page: requests, errors, tokens, cost and latency percentiles per hour or day, for
 * the whole account or per key or model. Everything is computed from the request log itself, over the same rows
 * the log API returns for the same time range, so the two always agree.
 */

const bucketSizes = { hour: 3_600_000, day: 86_400_000 } as const;
const maximumBuckets = { hour: 24 * 31, day: 400 } as const;
const defaultSpans = { hour: 24 * 3_600_000, day: 30 * 86_400_000 } as const;

const usageQuery = z.strictObject({
  from: timeParam.optional().describe('default: 24 hours (hour buckets) or 30 days (day buckets) before to'),
  to: timeParam.optional().describe('default: now'),
  bucket: z.enum(['hour', 'day']).optional().default('hour'),
  groupBy: z.enum(['none', 'key', 'model']).optional().default('none'),
  tzOffsetMinutes: z
    .string()
    .regex(/^-?\d{1,4}$/, 'expected whole minutes')
    .transform(Number)
    .pipe(z.number().int().min(-840).max(840))
    .optional()
    .transform((value) => value ?? 0)
    .describe("minutes east of UTC of the viewer's time zone, so days start at local midnight (default 0)"),
});

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

function add(totals: UsageTotals, row: UsageAggregateRow): void {
  totals.requests += row.requests;
  totals.errors += row.errors;
  totals.cancelled += row.cancelled;
  totals.promptTokens += row.promptTokens;
  totals.completionTokens += row.completionTokens;
  totals.totalTokens += row.totalTokens;
  totals.costUsd += row.costUsd;
}

const percentileKey = (bucket: number | null, group: string | null) => `${bucket ?? ''}|${group ?? ''}`;

export const usageRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api/accounts/:accountId/usage',
    tag: 'Usage',
    summary: 'Requests, errors, tokens, cost and latency p50/p95 per hour or day, optionally per key or model',
    description:
      'from and to are widened to whole buckets (returned as from/to). Latency percentiles are exact (nearest ' +
      'rank) over successful requests. Counts equal the rows the log API returns for the same range.',
    auth: 'user',
    access: 'account-member',
    params: accountParams,
    query: usageQuery,
    response: usageSchema,
    handle: async ({ caller, params, query, services }): Promise<UsageView> => {
      const db = services.database.db;
      const { account } = await authorizeAccount(db, caller, params.accountId, 'read');
      const bucketMs = bucketSizes[query.bucket];
      const offsetMs = query.tzOffsetMinutes * 60_000;
      const to = query.to ?? Date.now();
      const from = query.from ?? to - defaultSpans[query.bucket];
      if (from >= to) throw invalidRequest('from must be earlier than to', 'from');
      const firstBucket = Math.floor((from + offsetMs) / bucketMs);
      const endBucket = Math.ceil((to + offsetMs) / bucketMs);
      if (endBucket - firstBucket > maximumBuckets[query.bucket]) {
        throw invalidRequest(
          `at most ${maximumBuckets[query.bucket]} ${query.bucket} buckets per request; narrow the range or use day buckets`,
          'from',
        );
      }
      const range: UsageQuery = {
        accountId: account.id,
        from: firstBucket * bucketMs - offsetMs,
        to: endBucket * bucketMs - offsetMs,
        bucketMs,
        offsetMinutes: query.tzOffsetMinutes,
        groupBy: query.groupBy,
      };
      const grouped = query.groupBy !== 'none';
      const [aggregates, perPoint, perSeries, overall] = await Promise.all([
        aggregateUsage(db, range),
        latencyPercentiles(db, range, true, grouped),
        grouped ? latencyPercentiles(db, range, false, true) : Promise.resolve([] as LatencyPercentileRow[]),
        latencyPercentiles(db, range, false, false),
      ]);
      const percentiles = new Map<string, LatencyPercentileRow>();
      for (const row of [...perPoint, ...perSeries]) percentiles.set(percentileKey(row.bucket, row.groupId), row);

      const totals = emptyTotals();
      totals.latencyP50Ms = overall[0]?.p50 ?? null;
      totals.latencyP95Ms = overall[0]?.p95 ?? null;
      const series = new Map<
        string,
        { id: string | null; name: string | null; totals: UsageTotals; rows: UsageAggregateRow[] }
      >();
      if (!grouped) series.set('', { id: null, name: null, totals: emptyTotals(), rows: [] });
      for (const row of aggregates) {
        add(totals, row);
        const key = row.groupId ?? '';
        let entry = series.get(key);
        if (!entry) {
          entry = { id: row.groupId, name: row.groupName ?? row.groupId, totals: emptyTotals(), rows: [] };
          series.set(key, entry);
        }
        add(entry.totals, row);
        entry.rows.push(row);
      }
      return {
        from: new Date(range.from).toISOString(),
        to: new Date(range.to).toISOString(),
        bucket: query.bucket,
        groupBy: query.groupBy,
        totals,
        series: [...series.values()]
          .sort((first, second) => second.totals.requests - first.totals.requests)
          .map((entry) => {
            const byBucket = new Map(entry.rows.map((row) => [row.bucket, row]));
            const seriesPercentiles = grouped ? percentiles.get(percentileKey(null, entry.id)) : overall[0];
            const points: UsagePoint[] = [];
            for (let bucket = firstBucket; bucket < endBucket; bucket++) {
              const row = byBucket.get(bucket);
              const latency = percentiles.get(percentileKey(bucket, entry.id));
              points.push({
                start: new Date(bucket * bucketMs - offsetMs).toISOString(),
                requests: row?.requests ?? 0,
                errors: row?.errors ?? 0,
                cancelled: row?.cancelled ?? 0,
                promptTokens: row?.promptTokens ?? 0,
                completionTokens: row?.completionTokens ?? 0,
                totalTokens: row?.totalTokens ?? 0,
                costUsd: row?.costUsd ?? 0,
                latencyP50Ms: latency?.p50 ?? null,
                latencyP95Ms: latency?.p95 ?? null,
              });
            }
            return {
              id: entry.id,
              name: entry.name,
              totals: {
                ...entry.totals,
                latencyP50Ms: seriesPercentiles?.p50 ?? null,
                latencyP95Ms: seriesPercentiles?.p95 ?? null,
              },
              points,
            };
          }),
      };
    },
  }),
];
