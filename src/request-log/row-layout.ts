import type { Insertable, Selectable } from 'kysely';
import type { RequestLogTable } from '../db/schema.js';

/**
 * The request log's row as the writers take it: one fixed column order (the INSERTs' parameters), split into text and
 * number columns the way a batch holds them (row-batch.ts). It imports no values, so the batch, the SQLite thread and
 * both engines' writers can all load it.
 */

/** A row as the data plane hands it to the writer. */
export type RequestLogInsert = Insertable<RequestLogTable>;
/** A row as read back. */
export type RequestLogRow = Selectable<RequestLogTable>;

/** Every column a row may set, in one fixed order (the prepared statement's parameters). */
export const requestLogColumns = [
  'request_id',
  'created_at',
  'account_id',
  'key_id',
  'key_name',
  'model',
  'provider',
  'upstream_model',
  'status',
  'outcome',
  'error_type',
  'error_code',
  'error_message',
  'stream',
  'latency_ms',
  'ttft_ms',
  'prompt_tokens',
  'completion_tokens',
  'cached_tokens',
  'reasoning_tokens',
  'total_tokens',
  'usage_estimated',
  'cost_usd',
  'user_agent',
  'request_body',
  'response_body',
  'served_model',
  'deployment',
  'attempt_count',
  'attempts',
  'cache_write_tokens',
  'served_latency_ms',
  'endpoint',
] as const satisfies ReadonlyArray<keyof RequestLogInsert>;

export type RequestLogColumn = (typeof requestLogColumns)[number];

/** The columns that hold text, in the order RowBatch.append writes them (a batch keeps indexes into its strings). */
export const requestLogTextColumns = [
  'request_id',
  'account_id',
  'key_id',
  'key_name',
  'model',
  'provider',
  'upstream_model',
  'outcome',
  'error_type',
  'error_code',
  'error_message',
  'user_agent',
  'request_body',
  'response_body',
  'served_model',
  'deployment',
  'attempts',
  'endpoint',
] as const satisfies ReadonlyArray<RequestLogColumn>;

/** The columns that hold numbers: all the others, in requestLogColumns order (a batch keeps them in a Float64Array). */
export const requestLogNumberColumns: readonly RequestLogColumn[] = requestLogColumns.filter(
  (column) => !(requestLogTextColumns as readonly string[]).includes(column),
);

export const numberColumnCount = requestLogNumberColumns.length;
export const textColumnCount = requestLogTextColumns.length;

/** Per column of requestLogColumns: 1 when it holds text, 0 when it holds a number. */
export const columnIsText: Uint8Array = Uint8Array.from(requestLogColumns, (column) =>
  (requestLogTextColumns as readonly string[]).includes(column) ? 1 : 0,
);

/** Per column of requestLogColumns: its place among the columns of its kind (its offset within a row of a batch). */
export const columnPlaces: Int32Array = Int32Array.from(requestLogColumns, (column) => {
  const textPlace = (requestLogTextColumns as readonly string[]).indexOf(column);
  return textPlace === -1 ? requestLogNumberColumns.indexOf(column) : textPlace;
});

/** Places of the columns the writers read on their own (grouping by account, each key's last use). */
export const accountIdPlace = requestLogTextColumns.indexOf('account_id');
export const keyIdPlace = requestLogTextColumns.indexOf('key_id');
export const createdAtPlace = requestLogNumberColumns.indexOf('created_at');
