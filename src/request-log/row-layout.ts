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

/**
 * Every column a row may set, in one fixed order (the INSERTs' parameters), with what it holds. Checked against the
 * table: a column added to db/schema.ts does not compile until it is added here (and to RowBatch.append, which a unit
 * test round-trips).
 */
const columnKinds = {
  request_id: 'text',
  created_at: 'number',
  account_id: 'text',
  key_id: 'text',
  key_name: 'text',
  model: 'text',
  provider: 'text',
  upstream_model: 'text',
  status: 'number',
  outcome: 'text',
  error_type: 'text',
  error_code: 'text',
  error_message: 'text',
  stream: 'number',
  latency_ms: 'number',
  ttft_ms: 'number',
  prompt_tokens: 'number',
  completion_tokens: 'number',
  cached_tokens: 'number',
  reasoning_tokens: 'number',
  total_tokens: 'number',
  usage_estimated: 'number',
  cost_usd: 'number',
  user_agent: 'text',
  request_body: 'text',
  response_body: 'text',
  served_model: 'text',
  deployment: 'text',
  attempt_count: 'number',
  attempts: 'text',
  cache_write_tokens: 'number',
  served_latency_ms: 'number',
  endpoint: 'text',
} as const satisfies Record<Exclude<keyof RequestLogTable, 'id'>, 'text' | 'number'>;

export type RequestLogColumn = keyof typeof columnKinds;

/** Every column, in the order of columnKinds (a string-keyed object keeps its keys in the order written). */
export const requestLogColumns = Object.keys(columnKinds) as readonly RequestLogColumn[];

/** The columns that hold text, in requestLogColumns order (a batch keeps them as indexes into its strings). */
export const requestLogTextColumns: readonly RequestLogColumn[] = requestLogColumns.filter(
  (column) => columnKinds[column] === 'text',
);

/** The columns that hold numbers, in requestLogColumns order (a batch keeps them in a Float64Array). */
export const requestLogNumberColumns: readonly RequestLogColumn[] = requestLogColumns.filter(
  (column) => columnKinds[column] === 'number',
);

export const numberColumnCount = requestLogNumberColumns.length;
export const textColumnCount = requestLogTextColumns.length;

/** Per column of requestLogColumns: 1 when it holds text, 0 when it holds a number. */
export const columnIsText: Uint8Array = Uint8Array.from(requestLogColumns, (column) =>
  columnKinds[column] === 'text' ? 1 : 0,
);

/** Per column of requestLogColumns: its place among the columns of its kind (its offset within a row of a batch). */
export const columnPlaces: Int32Array = Int32Array.from(requestLogColumns, (column) => {
  const textPlace = requestLogTextColumns.indexOf(column);
  return textPlace === -1 ? requestLogNumberColumns.indexOf(column) : textPlace;
});

/** Places of the columns the writers read on their own (grouping by account, each key's last use). */
export const accountIdPlace = requestLogTextColumns.indexOf('account_id');
export const keyIdPlace = requestLogTextColumns.indexOf('key_id');
export const createdAtPlace = requestLogNumberColumns.indexOf('created_at');
