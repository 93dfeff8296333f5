import type { ResponseRecord } from './responses.js';

/** The columns of a stored response's row, in the order both engines' writers bind them (responseRowValues). */
export const responseColumns = [
  'id',
  'account_id',
  'key_id',
  'model',
  'previous_response_id',
  'created_at',
  'expires_at',
  'input_count',
  'stored_bytes',
  'response',
  'input_items',
  'output_items',
  'item_ids',
  'state',
  'streaming_until',
] as const;

/** A stored response's row values, in responseColumns order. */
export function responseRowValues(record: ResponseRecord): unknown[] {
  return [
    record.id,
    record.accountId,
    record.keyId,
    record.model,
    record.previousResponseId,
    record.createdAt,
    record.expiresAt,
    record.inputCount,
    record.storedBytes,
    record.response,
    record.inputItems,
    record.outputItems,
    JSON.stringify(record.itemIds),
    record.state ?? null,
    record.streamingUntil ?? null,
  ];
}

/**
 * What both engines' writers append to their insert: a response replaces the row of its id only while that row stands
 * for it streaming (`in_progress`); a row stored whole, or marked `deleted` while it streamed, stays as it is.
 */
export const replaceStreamingRow = `on conflict (id) do update set ${responseColumns
  .filter((column) => column !== 'id')
  .map((column) => `${column} = excluded.${column}`)
  .join(', ')} where responses.state = 'in_progress'`;
