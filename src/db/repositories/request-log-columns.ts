import type { RequestLogInsert } from './request-log.js';

/**
 * The request log's columns as the writers take them: one fixed order, split into text and number columns the way a
 * batch holds them (request-log/row-batch.ts). A module of its own that imports no values, so that the batch, the
 * SQLite thread and both engines' writers can read these lists as they load without an import cycle.
 */

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
] as const satisfies ReadonlyArray<keyof RequestLogInsert>;

/** The columns that hold text (request-log/row-batch.ts keeps them as indexes into the batch's strings). */
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
] as const satisfies ReadonlyArray<(typeof requestLogColumns)[number]>;

/** The columns that hold numbers: all the others (request-log/row-batch.ts keeps them in a Float64Array, in this order). */
export const requestLogNumberColumns: readonly (typeof requestLogColumns)[number][] = requestLogColumns.filter(
  (column) => !(requestLogTextColumns as readonly string[]).includes(column),
);

/** Where each column of requestLogColumns is in a batch: its kind (0 number, 1 text) and its place among its kind. */
export const requestLogLayout: ReadonlyArray<readonly [kind: 0 | 1, place: number]> = requestLogColumns.map(
  (column) => {
    const textPlace = (requestLogTextColumns as readonly string[]).indexOf(column);
    return textPlace === -1 ? [0, requestLogNumberColumns.indexOf(column)] : [1, textPlace];
  },
);
