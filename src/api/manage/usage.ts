import { z } from 'zod';
import { authorizeAccount } from '../../access/account-access.js';
import { apiError } from '../../errors/api-error.js';
import { bucketSizes, buildUsageReport } from '../../usage/usage-report.js';
import { timeParam } from './query-params.js';
import { defineRoute } from './route.js';
import { accountParams, type UsageView, usageSchema } from './schemas.js';

/** The Usage page's data: see usage/usage-report.ts for how it is computed from the request log. */

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
      if (from >= to) throw apiError('invalid_request', 'from must be earlier than to', { param: 'from' });
      const firstBucket = Math.floor((from + offsetMs) / bucketMs);
      const endBucket = Math.ceil((to + offsetMs) / bucketMs);
      if (endBucket - firstBucket > maximumBuckets[query.bucket]) {
        throw apiError(
          'invalid_request',
          `at most ${maximumBuckets[query.bucket]} ${query.bucket} buckets per request; narrow the range or use day buckets`,
          { param: 'from' },
        );
      }
      return buildUsageReport(db, {
        accountId: account.id,
        firstBucket,
        endBucket,
        bucket: query.bucket,
        offsetMinutes: query.tzOffsetMinutes,
        groupBy: query.groupBy,
      });
    },
  }),
];
