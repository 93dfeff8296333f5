import type { Kysely, SelectQueryBuilder } from 'kysely';
import type { Database } from '../db/schema.js';
import { hourGuidedSearch } from './hour-guided-search.js';
import { type RequestLogRow, requestLogColumns } from './row-layout.js';

/**
 * Request-log queries for the console and the management API: filters and keyset pagination that stay fast at
 * millions of rows per account. Each filter is an equality that leads one of the (account_id, X, created_at, id)
 * indexes (migration 0002), and the cursor is a range on created_at, so every page (the first or the ten-thousandth)
 * is an index seek plus `limit` rows walked newest first. No OFFSET, no COUNT.
 */

/** A position in the log, newest first: rows strictly older than it come next. */
export interface RequestLogCursor {
  createdAt: number;
  id: number;
}

/** success | error (any) | client_error (4xx) | server_error (5xx) | cancelled (the client went away). */
export type StatusClass = 'success' | 'error' | 'client_error' | 'server_error' | 'cancelled';
export const statusClasses: readonly StatusClass[] = ['success', 'error', 'client_error', 'server_error', 'cancelled'];

export interface RequestLogFilter {
  /** Absent only for operator-wide queries. */
  accountId?: string | undefined;
  keyId?: string | undefined;
  model?: string | undefined;
  /** The data-plane endpoint (chat_completions, models…). */
  endpoint?: string | undefined;
  /** The provider entry that served the request (or the last one tried). */
  provider?: string | undefined;
  /** Requests made with keys of this environment (the key's `environment`). */
  keyEnvironment?: string | undefined;
  /** Requests that took at least this long, ms. */
  minLatencyMs?: number | undefined;
  /** The one request with this x-request-id. */
  requestId?: string | undefined;
  status?: StatusClass | undefined;
  /** Inclusive lower bound, ms. */
  from?: number | undefined;
  /** Exclusive upper bound, ms. */
  to?: number | undefined;
}

export interface RequestLogSearch extends RequestLogFilter {
  limit: number;
  before?: RequestLogCursor | undefined;
}

/** A log row without its bodies (which may be a megabyte each): what lists show. */
export type RequestLogSummaryRow = Omit<RequestLogRow, 'request_body' | 'response_body'>;

type BodyColumn = 'request_body' | 'response_body';
const summaryColumns: ReadonlyArray<keyof RequestLogSummaryRow> = [
  'id',
  ...requestLogColumns.filter(
    (column): column is Exclude<(typeof requestLogColumns)[number], BodyColumn> =>
      column !== 'request_body' && column !== 'response_body',
  ),
];

/** Applies a filter's conditions to any query over request_log. */
export function applyRequestLogFilter<Output>(
  query: SelectQueryBuilder<Database, 'request_log', Output>,
  filter: RequestLogFilter,
  keyIds?: readonly string[] | undefined,
): SelectQueryBuilder<Database, 'request_log', Output> {
  let select = query;
  if (filter.accountId !== undefined) select = select.where('account_id', '=', filter.accountId);
  if (filter.keyId !== undefined) select = select.where('key_id', '=', filter.keyId);
  if (filter.model !== undefined) select = select.where('model', '=', filter.model);
  if (filter.endpoint !== undefined) select = select.where('endpoint', '=', filter.endpoint);
  if (filter.provider !== undefined) select = select.where('provider', '=', filter.provider);
  if (filter.requestId !== undefined) select = select.where('request_id', '=', filter.requestId);
  if (filter.minLatencyMs !== undefined) select = select.where('latency_ms', '>=', filter.minLatencyMs);
  // The key environment, resolved to the account's keys of that environment by the caller (searchRequestLog).
  if (keyIds !== undefined) select = select.where('key_id', 'in', keyIds.length > 0 ? keyIds : ['']);
  switch (filter.status) {
    case undefined:
      break;
    case 'success':
    case 'error':
    case 'cancelled':
      select = select.where('outcome', '=', filter.status);
      break;
    case 'client_error':
      select = select.where('outcome', '=', 'error').where('status', '>=', 400).where('status', '<', 500);
      break;
    case 'server_error':
      select = select.where('outcome', '=', 'error').where('status', '>=', 500);
      break;
  }
  if (filter.from !== undefined) select = select.where('created_at', '>=', filter.from);
  if (filter.to !== undefined) select = select.where('created_at', '<', filter.to);
  return select;
}

/**
 * The ids of the keys a key-environment filter stands for, read first: as a literal list, PostgreSQL walks each daily
 * partition's index newest first and stops at the page, where a subquery made it join the account's whole log
 * (docs/performance.md, "The request-log store").
 */
export async function keysOfEnvironment(db: Kysely<Database>, filter: RequestLogFilter): Promise<string[] | undefined> {
  const environment = filter.keyEnvironment;
  if (environment === undefined) return undefined;
  let keys = db.selectFrom('api_keys').select('id').where('environment', '=', environment);
  if (filter.accountId !== undefined) keys = keys.where('account_id', '=', filter.accountId);
  return (await keys.execute()).map((key) => key.id);
}

/**
 * Newest first; returns up to `limit` rows older than the cursor. An account's log is read within the hours the
 * usage rollup says hold a match (hour-guided-search.ts), so a rare combination of filters does not walk months of
 * rows; the rows are those of the plain search either way.
 */
export async function searchRequestLog(
  db: Kysely<Database>,
  search: RequestLogSearch,
): Promise<RequestLogSummaryRow[]> {
  const keyIds = await keysOfEnvironment(db, search);
  const plain = (narrowed: RequestLogSearch) => plainRequestLogSearch(db, narrowed, keyIds);
  return (await hourGuidedSearch(db, search, keyIds, plain)) ?? plain(search);
}

/** The search without the rollups' guide: one query on the log's indexes (exported for the test comparing the two). */
export async function plainRequestLogSearch(
  db: Kysely<Database>,
  search: RequestLogSearch,
  keyIds: readonly string[] | undefined,
): Promise<RequestLogSummaryRow[]> {
  let select = applyRequestLogFilter(db.selectFrom('request_log').select(summaryColumns), search, keyIds);
  const before = search.before;
  if (before) {
    // "(created_at, id) < (t, i)" written as a range on created_at plus a tie-breaker, so that both engines seek the
    // index to t instead of walking from the newest row.
    select = select
      .where('created_at', '<=', before.createdAt)
      .where((where) => where.or([where('created_at', '<', before.createdAt), where('id', '<', before.id)]));
  }
  return select.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(search.limit).execute();
}

/** One row with its bodies, by request id; scoped to an account unless the caller is the operator. */
export async function findRequestLogEntry(
  db: Kysely<Database>,
  requestId: string,
  accountId: string | undefined,
): Promise<RequestLogRow | undefined> {
  let select = db.selectFrom('request_log').selectAll().where('request_id', '=', requestId);
  if (accountId !== undefined) select = select.where('account_id', '=', accountId);
  return select.executeTakeFirst();
}
