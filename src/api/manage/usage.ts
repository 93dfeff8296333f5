import type { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import { authorizeAccount, requireAdmin } from '../../access/account-access.js';
import { allowedModels } from '../../access/policy.js';
import { listKeysOfAccount } from '../../db/repositories/api-keys.js';
import { spendByAccount, usageRollupGroups } from '../../db/repositories/usage.js';
import { apiError } from '../../errors/api-error.js';
import { keyStatus } from '../../keys/service.js';
import { effectiveLimits, parseStoredLimits } from '../../limits/settings.js';
import { type ExportFormat, exportContentTypes, formatRecords } from '../../request-log/export.js';
import { atBudgetLimit, budgetStates, isUnpriced } from '../../usage/budgets.js';
import { groupNamesFrom } from '../../usage/group-names.js';
import { bucketSizes, buildUsageReport } from '../../usage/usage-report.js';
import { timeParam } from './query-params.js';
import { defineRoute } from './route.js';
import {
  type AccountsUsageView,
  accountParams,
  accountsUsageSchema,
  type BudgetsView,
  budgetsSchema,
  type KeysUsageView,
  keysUsageSchema,
  type UsageView,
  usageGroupBySchema,
  usageSchema,
} from './schemas.js';
import type { ManagementServices } from './services.js';

/**
 * Usage and spend: the Usage page's reports (an account's, and the operator's across accounts), the accounts list's
 * and keys page's spend columns, and budgets with their current spend. All read the usage rollups (usage/).
 */

const maximumBuckets = { hour: 24 * 31, day: 400 } as const;
const defaultSpans = { hour: 24 * 3_600_000, day: 30 * 86_400_000 } as const;
const dayMs = 86_400_000;

const reportFields = {
  from: timeParam.optional().describe('default: 24 hours (hour buckets) or 30 days (day buckets) before to'),
  to: timeParam.optional().describe('default: now'),
  bucket: z.enum(['hour', 'day']).optional().default('hour'),
  tzOffsetMinutes: z
    .string()
    .regex(/^-?\d{1,4}$/, 'expected whole minutes')
    .transform(Number)
    .pipe(z.number().int().min(-840).max(840))
    .optional()
    .transform((value) => value ?? 0)
    .describe(
      "minutes east of UTC of the viewer's time zone, so days start at local midnight (default 0). Usage is kept " +
        'per hour: with an offset that is not whole hours, days start at the local half or quarter hour nearest after',
    ),
};

const accountUsageQuery = z.strictObject({ ...reportFields, groupBy: usageGroupBySchema.optional().default('none') });
const allUsageQuery = z.strictObject({
  ...reportFields,
  groupBy: usageGroupBySchema.or(z.literal('account')).optional().default('none'),
});
type UsageQuery = z.output<typeof allUsageQuery>;

async function report(services: ManagementServices, accountId: string | undefined, query: UsageQuery) {
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
  const db = services.database.db;
  return buildUsageReport(
    db,
    {
      accountId,
      firstBucket,
      endBucket,
      bucket: query.bucket,
      offsetMinutes: query.tzOffsetMinutes,
      groupBy: query.groupBy,
      dialect: services.database.dialect,
      readArrays: services.database.readArrays,
    },
    groupNamesFrom(db),
  );
}

/** The last `days` UTC days, today included: whole days, so the daily rollups answer. */
function recentDays(days: number, now: number): { from: number; to: number } {
  const to = Math.floor(now / dayMs) * dayMs + dayMs;
  return { from: to - days * dayMs, to };
}

const daysQuery = z.strictObject({
  days: z
    .string()
    .regex(/^\d{1,3}$/, 'expected a whole number of days')
    .transform(Number)
    .pipe(z.number().int().min(1).max(400))
    .optional()
    .transform((value) => value ?? 30)
    .describe('the last N UTC days, today included (default 30)'),
});

const spendOf = (row: { requests: number; errors: number; totalTokens: number; costUsd: number } | undefined) => ({
  requests: row?.requests ?? 0,
  errors: row?.errors ?? 0,
  totalTokens: row?.totalTokens ?? 0,
  costUsd: row?.costUsd ?? 0,
});

const formatField = {
  format: z.enum(['csv', 'jsonl']).optional().default('csv').describe('csv (with a header row) or jsonl (JSON Lines)'),
};

/** One row per series and bucket: the report's points, flattened for a spreadsheet. */
interface UsageExportRow {
  start: string;
  group: string | null;
  label: string;
  point: UsageView['totals'];
}

const usageExportColumns: Array<readonly [string, (row: UsageExportRow) => unknown]> = [
  ['start', (row) => row.start],
  ['group_id', (row) => row.group],
  ['group', (row) => row.label],
  ['requests', (row) => row.point.requests],
  ['errors', (row) => row.point.errors],
  ['cancelled', (row) => row.point.cancelled],
  ['prompt_tokens', (row) => row.point.promptTokens],
  ['completion_tokens', (row) => row.point.completionTokens],
  ['total_tokens', (row) => row.point.totalTokens],
  ['cost_usd', (row) => row.point.costUsd],
  ['latency_p50_ms', (row) => row.point.latencyP50Ms],
  ['latency_p95_ms', (row) => row.point.latencyP95Ms],
];

const usageExportStreams = {
  'text/csv':
    'CSV with a header row, one row per series and bucket (empty buckets included): start, group_id, group, ' +
    'requests, errors, cancelled, prompt_tokens, completion_tokens, total_tokens, cost_usd, latency_p50_ms, ' +
    'latency_p95_ms',
  'application/x-ndjson': 'JSON Lines with the same fields, one object per series and bucket',
};

function exportUsage(reply: FastifyReply, usage: UsageView, format: ExportFormat, name: string): Readable {
  const rows = (async function* () {
    // A series at a time: a report is at most 744 buckets per series.
    for (const series of usage.series) {
      yield series.points.map(({ start, ...point }) => ({ start, group: series.id, label: series.label, point }));
    }
  })();
  reply.header('content-type', exportContentTypes[format]);
  reply.header('content-disposition', `attachment; filename="${name}-${usage.from.slice(0, 10)}.${format}"`);
  return formatRecords(rows, format, usageExportColumns, (row) => ({
    start: row.start,
    groupId: row.group,
    group: row.label,
    ...row.point,
  }));
}

export const usageRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api/accounts/:accountId/usage/export',
    tag: 'Usage',
    summary: "The account's usage report as a CSV or JSON Lines download (one row per series and bucket)",
    description: 'Takes the same query as the usage report, plus format.',
    auth: 'user',
    access: 'account-member',
    params: accountParams,
    query: accountUsageQuery.extend(formatField),
    streams: usageExportStreams,
    handle: async ({ caller, params, query, reply, services }) => {
      const { account } = await authorizeAccount(services.database.db, caller, params.accountId, 'read');
      const usage = await report(services, account.id, query);
      return exportUsage(reply, usage, query.format, `switchboard-usage-${account.name.replace(/[^\w.-]+/g, '_')}`);
    },
  }),

  defineRoute({
    method: 'GET',
    path: '/api/usage/export',
    tag: 'Usage',
    summary: 'Usage across all accounts (admin) as a CSV or JSON Lines download',
    description: 'Takes the same query as GET /api/usage, plus format.',
    auth: 'user',
    access: 'admin',
    query: allUsageQuery.extend(formatField),
    streams: usageExportStreams,
    handle: async ({ caller, query, reply, services }) => {
      requireAdmin(caller);
      return exportUsage(reply, await report(services, undefined, query), query.format, 'switchboard-usage');
    },
  }),

  defineRoute({
    method: 'GET',
    path: '/api/accounts/:accountId/usage',
    tag: 'Usage',
    summary:
      'Requests, errors, tokens, cost and latency p50/p95 per hour or day, optionally per key, model, endpoint or provider',
    description:
      'from and to are widened to whole buckets (returned as from/to). Counts, tokens and cost equal the rows the ' +
      'log API returns for the same range. Latency percentiles cover successful model calls only and are read ' +
      'from a latency histogram (exact to within its bucket). Requests without a model form the series "" labelled ' +
      '"(no model)".',
    auth: 'user',
    access: 'account-member',
    params: accountParams,
    query: accountUsageQuery,
    response: usageSchema,
    handle: async ({ caller, params, query, services }): Promise<UsageView> => {
      const { account } = await authorizeAccount(services.database.db, caller, params.accountId, 'read');
      return report(services, account.id, query);
    },
  }),

  defineRoute({
    method: 'GET',
    path: '/api/usage',
    tag: 'Usage',
    summary:
      'Usage across all accounts (admin), per hour or day, optionally per account, key, model, endpoint or provider',
    description:
      "The same report as an account's usage, over every account; groupBy=account gives one series per account.",
    auth: 'user',
    access: 'admin',
    query: allUsageQuery,
    response: usageSchema,
    handle: async ({ caller, query, services }): Promise<UsageView> => {
      requireAdmin(caller);
      return report(services, undefined, query);
    },
  }),

  defineRoute({
    method: 'GET',
    path: '/api/usage/accounts',
    tag: 'Usage',
    summary: "Each account's requests, errors, tokens and spend over the last N days (admin; the accounts list)",
    description: 'Every account is listed, those without requests with zeros; sorted by spend, highest first.',
    auth: 'user',
    access: 'admin',
    query: daysQuery,
    response: accountsUsageSchema,
    handle: async ({ caller, query, services }): Promise<AccountsUsageView> => {
      requireAdmin(caller);
      const db = services.database.db;
      const { from, to } = recentDays(query.days, Date.now());
      const rows = await spendByAccount(db, from, to, services.database.dialect);
      const byAccount = new Map(rows.map((row) => [row.accountId, row]));
      const accounts = await db.selectFrom('accounts').select(['id', 'name', 'disabled']).execute();
      const totals = spendOf(undefined);
      for (const row of rows) {
        totals.requests += row.requests;
        totals.errors += row.errors;
        totals.totalTokens += row.totalTokens;
        totals.costUsd += row.costUsd;
      }
      return {
        from: new Date(from).toISOString(),
        to: new Date(to).toISOString(),
        totals,
        accounts: accounts
          .map((account) => ({
            accountId: account.id,
            name: account.name,
            disabled: account.disabled === 1,
            ...spendOf(byAccount.get(account.id)),
          }))
          .sort((first, second) => second.costUsd - first.costUsd || first.name.localeCompare(second.name)),
      };
    },
  }),

  defineRoute({
    method: 'GET',
    path: '/api/accounts/:accountId/usage/keys',
    tag: 'Usage',
    summary: "Each key's requests, errors, tokens and spend over the last N days (the keys page)",
    description: 'Every key of the account is listed (revoked ones too), those without requests with zeros.',
    auth: 'user',
    access: 'account-member',
    params: accountParams,
    query: daysQuery,
    response: keysUsageSchema,
    handle: async ({ caller, params, query, services }): Promise<KeysUsageView> => {
      const db = services.database.db;
      const { account } = await authorizeAccount(db, caller, params.accountId, 'read');
      const { from, to } = recentDays(query.days, Date.now());
      const rows = await usageRollupGroups(db, { accountId: account.id, period: 'day', from, to, groupBy: 'key' });
      const byKey = new Map(rows.map((row) => [row.groupId, row]));
      const keys = await listKeysOfAccount(db, account.id);
      return {
        from: new Date(from).toISOString(),
        to: new Date(to).toISOString(),
        keys: keys.map((key) => ({
          keyId: key.id,
          name: key.name,
          display: key.display,
          ...spendOf(byKey.get(key.id)),
        })),
      };
    },
  }),

  defineRoute({
    method: 'GET',
    path: '/api/accounts/:accountId/budgets',
    tag: 'Usage',
    summary: "The account's and its keys' daily and monthly budgets, with the current period's spend and reset time",
    description:
      'Only budgets in force are listed (set on the account or key, or configured as defaults); keys that are ' +
      'revoked or expired are left out. Spend is what the request log holds for the period.',
    auth: 'user',
    access: 'account-member',
    params: accountParams,
    response: budgetsSchema,
    handle: async ({ caller, params, services }): Promise<BudgetsView> => {
      const db = services.database.db;
      const { account } = await authorizeAccount(db, caller, params.accountId, 'read');
      const defaults = services.config.limits;
      const now = Date.now();
      const accountLimits = effectiveLimits(parseStoredLimits(account.limits), defaults.accountDefaults);
      const keys = (await listKeysOfAccount(db, account.id)).filter((key) => {
        const status = keyStatus(key, now);
        return status === 'active' || status === 'expiring';
      });
      const callable = allowedModels(services.catalog, JSON.parse(account.allowed_models) as string[], null);
      return {
        atLimit: atBudgetLimit,
        unpricedModels: callable.filter((name) => {
          const model = services.catalog.byName.get(name);
          return model !== undefined && isUnpriced(model);
        }),
        account: { budgets: await budgetStates(db, { accountId: account.id }, accountLimits, now) },
        keys: await Promise.all(
          keys.map(async (key) => ({
            keyId: key.id,
            name: key.name,
            display: key.display,
            budgets: await budgetStates(
              db,
              { keyId: key.id },
              effectiveLimits(parseStoredLimits(key.limits), defaults.keyDefaults),
              now,
            ),
          })),
        ),
      };
    },
  }),
];
