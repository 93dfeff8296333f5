import type { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import { authorizeAccount, requireAdmin } from '../../access/account-access.js';
import { listKeysWithNamesakes } from '../../db/repositories/api-keys.js';
import { apiError } from '../../errors/api-error.js';
import { toKeyInfo } from '../../keys/service.js';
import { toLogEntry } from '../../request-log/entry.js';
import { type ExportFormat, exportContentTypes, exportRequestLog } from '../../request-log/export.js';
import type { RequestLogRow } from '../../request-log/row-layout.js';
import {
  findRequestLogEntry,
  type RequestLogFilter,
  searchRequestLog,
  statusClasses,
} from '../../request-log/search.js';
import { endpointNames } from '../v1/pipeline/endpoint-names.js';
import { cursorParam, encodeCursor, limitParam, timeParam } from './query-params.js';
import { defineRoute } from './route.js';
import { accountParams, type LogDetailView, type LogPage, logDetailSchema, logPageSchema } from './schemas.js';
import type { ManagementServices } from './services.js';

/** The request log: an account's (members) and everyone's (admins). Newest first, keyset-paginated. */

const filterFields = {
  key: z.string().min(1).max(100).optional().describe('key id'),
  model: z.string().min(1).max(256).optional().describe('public model name'),
  // A name from the list, not any word: a typo would otherwise answer an empty log, as if there were no traffic.
  endpoint: z
    .enum(endpointNames, { message: `expected one of ${endpointNames.join(', ')}` })
    .optional()
    .describe(`the data-plane endpoint that served the request: ${endpointNames.join(', ')}`),
  provider: z.string().min(1).max(100).optional().describe('the provider entry that served it (or was tried last)'),
  environment: z
    .string()
    .min(1)
    .max(100)
    .optional()
    .describe("requests made with keys of this environment (the key's environment, e.g. production)"),
  minLatencyMs: z
    .string()
    .regex(/^\d{1,9}$/, 'expected whole milliseconds')
    .transform(Number)
    .optional()
    .describe('requests that took at least this many milliseconds'),
  requestId: z.string().min(1).max(100).optional().describe("a request's x-request-id: the one row, if any"),
  status: z.enum(statusClasses).optional().describe('client_error = 4xx, server_error = 5xx'),
  from: timeParam.optional().describe('inclusive; ISO 8601 or epoch ms'),
  to: timeParam.optional().describe('exclusive; ISO 8601 or epoch ms'),
  cursor: cursorParam.optional(),
  limit: limitParam(200, 50),
};

const accountLogQuery = z.strictObject(filterFields);
const adminLogQuery = z.strictObject({ ...filterFields, account: z.string().min(1).max(100).optional() });

type LogQuery = z.output<typeof accountLogQuery>;

const { cursor: _cursor, limit: _limit, ...exportFilterFields } = filterFields;
const formatField = {
  format: z.enum(['csv', 'jsonl']).optional().default('csv').describe('csv (with a header row) or jsonl (JSON Lines)'),
};
const accountExportQuery = z.strictObject({ ...exportFilterFields, ...formatField });
const adminExportQuery = z.strictObject({
  ...exportFilterFields,
  ...formatField,
  account: z.string().min(1).max(100).optional(),
});
type ExportQuery = z.output<typeof accountExportQuery>;

const exportStreams = {
  'text/csv':
    'CSV, one row per request, newest first, with a header row: time, request_id, account_id, key_id, key_name, ' +
    'endpoint, model, served_model, provider, upstream_model, deployment, attempt_count, status, outcome, ' +
    'error_type, error_code, error_message, stream, latency_ms, ttft_ms, prompt/completion/total/cached/' +
    'cache_write/reasoning_tokens, usage_estimated, cost_usd, user_agent',
  'application/x-ndjson': 'JSON Lines: one log entry per line, as the log API returns them, newest first',
};

/** Filters of the log query as the search takes them. */
function filterOf(query: Omit<ExportQuery, 'format'>, accountId: string | undefined): RequestLogFilter {
  if (query.from !== undefined && query.to !== undefined && query.from >= query.to) {
    throw apiError('invalid_request', 'from must be earlier than to', { param: 'from' });
  }
  return {
    accountId,
    keyId: query.key,
    model: query.model,
    endpoint: query.endpoint,
    provider: query.provider,
    keyEnvironment: query.environment,
    minLatencyMs: query.minLatencyMs,
    requestId: query.requestId,
    status: query.status,
    from: query.from,
    to: query.to,
  };
}

function sendExport(reply: FastifyReply, format: ExportFormat, name: string, stream: Readable): Readable {
  const day = new Date().toISOString().slice(0, 10);
  reply.header('content-type', exportContentTypes[format]);
  reply.header('content-disposition', `attachment; filename="${name}-${day}.${format}"`);
  return stream;
}

async function page(services: ManagementServices, filter: RequestLogFilter, query: LogQuery): Promise<LogPage> {
  // One row more than asked says whether there is a next page without counting.
  const rows = await searchRequestLog(services.database.db, {
    ...filter,
    limit: query.limit + 1,
    before: query.cursor,
  });
  const data = rows.slice(0, query.limit).map(toLogEntry);
  const last = rows.length > query.limit ? rows[query.limit - 1] : undefined;
  const keys = await listKeysWithNamesakes(services.database.db, [...new Set(data.map((entry) => entry.keyId))]);
  const now = Date.now();
  return {
    data,
    keys: keys.map((key) => toKeyInfo(key, now)),
    nextCursor: last ? encodeCursor({ createdAt: Number(last.created_at), id: Number(last.id) }) : null,
  };
}

function detail(row: RequestLogRow): LogDetailView {
  return {
    ...toLogEntry(row),
    bodiesLogged: row.request_body !== null || row.response_body !== null,
    requestBody: row.request_body,
    responseBody: row.response_body,
  };
}

const requestIdParams = { requestId: z.string().min(1).max(100) };

export const logRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api/accounts/:accountId/logs/export',
    tag: 'Request log',
    summary: "The account's request log as a CSV or JSON Lines download, with the log's filters; streamed",
    description:
      'Every row the filters select, newest first, of any size: the rows are read a page at a time as the client ' +
      'downloads, so the server holds a page or two at once. Text that a spreadsheet would run as a formula ' +
      '(starting with = + - @, a tab or a carriage return) gets a leading apostrophe in CSV, and every text field is ' +
      'quoted, so a spreadsheet splitting at ; or tabs starts no cell inside one.',
    auth: 'user',
    access: 'account-member',
    params: accountParams,
    query: accountExportQuery,
    streams: exportStreams,
    handle: async ({ caller, params, query, reply, services }) => {
      const db = services.database.db;
      const { account } = await authorizeAccount(db, caller, params.accountId, 'read');
      const stream = exportRequestLog(db, filterOf(query, account.id), query.format);
      return sendExport(reply, query.format, `switchboard-log-${account.name.replace(/[^\w.-]+/g, '_')}`, stream);
    },
  }),

  defineRoute({
    method: 'GET',
    path: '/api/logs/export',
    tag: 'Request log',
    summary: 'The request log across all accounts (admin) as a CSV or JSON Lines download; streamed',
    auth: 'user',
    access: 'admin',
    query: adminExportQuery,
    streams: exportStreams,
    handle: async ({ caller, query, services, reply }) => {
      requireAdmin(caller);
      const stream = exportRequestLog(services.database.db, filterOf(query, query.account), query.format);
      return sendExport(reply, query.format, 'switchboard-log', stream);
    },
  }),

  defineRoute({
    method: 'GET',
    path: '/api/accounts/:accountId/logs',
    tag: 'Request log',
    summary: "The account's request log, newest first, keyset-paginated and filterable",
    description:
      'Follow nextCursor for older rows. Filters combine (AND). Rows never include bodies; fetch one entry for them.',
    auth: 'user',
    access: 'account-member',
    params: accountParams,
    query: accountLogQuery,
    response: logPageSchema,
    handle: async ({ caller, params, query, services }) => {
      const { account } = await authorizeAccount(services.database.db, caller, params.accountId, 'read');
      return page(services, filterOf(query, account.id), query);
    },
  }),

  defineRoute({
    method: 'GET',
    path: '/api/accounts/:accountId/logs/:requestId',
    tag: 'Request log',
    summary: 'One request, with its bodies when body logging was on for the account',
    auth: 'user',
    access: 'account-member',
    params: accountParams.extend(requestIdParams),
    response: logDetailSchema,
    handle: async ({ caller, params, services }) => {
      const db = services.database.db;
      const { account } = await authorizeAccount(db, caller, params.accountId, 'read');
      const row = await findRequestLogEntry(db, params.requestId, account.id);
      if (!row)
        throw apiError('request_not_found', `no request "${params.requestId.slice(0, 100)}" in this account's log`);
      return detail(row);
    },
  }),

  defineRoute({
    method: 'GET',
    path: '/api/logs',
    tag: 'Request log',
    summary: 'The request log across all accounts (admin), newest first, keyset-paginated and filterable',
    auth: 'user',
    access: 'admin',
    query: adminLogQuery,
    response: logPageSchema,
    handle: async ({ caller, query, services }) => {
      requireAdmin(caller);
      return page(services, filterOf(query, query.account), query);
    },
  }),

  defineRoute({
    method: 'GET',
    path: '/api/logs/:requestId',
    tag: 'Request log',
    summary: 'One request of any account (admin)',
    auth: 'user',
    access: 'admin',
    params: z.strictObject(requestIdParams),
    response: logDetailSchema,
    handle: async ({ caller, params, services }) => {
      requireAdmin(caller);
      const row = await findRequestLogEntry(services.database.db, params.requestId, undefined);
      if (!row) throw apiError('request_not_found', `no request "${params.requestId.slice(0, 100)}"`);
      return detail(row);
    },
  }),
];
