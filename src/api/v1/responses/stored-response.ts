import type { ResponseRecord } from '../../../db/repositories/responses.js';
import { storedResponseTooLarge } from './errors.js';
import { readStoredSettings, storedSettingsJson } from './stored-settings.js';
import type { InputItem, OutputItem, ResponseObject } from './types.js';

/**
 * A finished response as the row the database keeps (db/repositories/responses.ts), and back. The object is stored
 * without its output (and compacted: stored-settings.ts), which is kept item by item after the input items. The record
 * holds the account and key ids, never the key. Its size (the JSON of the whole object and of every item, as the
 * client sees them) is bounded by `responses.max_stored_bytes`.
 */

export interface RecordContext {
  accountId: string;
  keyId: string;
  /** The response's normalized input items (stored-items.ts). */
  inputItems: readonly InputItem[];
  /** Epoch milliseconds. */
  now: number;
  retentionMs: number;
  /** The responses it continues (the conversation replayed before it), whose expiry it extends. */
  conversationIds?: readonly string[];
}

function itemId(item: InputItem | OutputItem): string {
  return typeof item.id === 'string' ? item.id : '';
}

export interface StoredResponse {
  record: ResponseRecord;
  /** The settings' JSON as the client gets them (the record holds them compacted). */
  settingsJson: string;
}

export function toResponseRecord(response: ResponseObject, context: RecordContext): StoredResponse {
  const { output, ...settings } = response;
  const json = JSON.stringify(settings);
  let storedBytes = Buffer.byteLength(json);
  const items = [...context.inputItems, ...output].map((item) => {
    const itemJson = JSON.stringify(item);
    storedBytes += Buffer.byteLength(itemJson);
    return { id: itemId(item), json: itemJson };
  });
  const record: ResponseRecord = {
    id: response.id,
    accountId: context.accountId,
    keyId: context.keyId,
    model: response.model,
    previousResponseId: response.previous_response_id,
    createdAt: context.now,
    expiresAt: context.now + context.retentionMs,
    response: storedSettingsJson(settings, json),
    items,
    inputCount: context.inputItems.length,
    storedBytes,
    ...(context.conversationIds ? { conversationIds: context.conversationIds } : {}),
  };
  return { record, settingsJson: json };
}

/** The bytes the input alone will take, to refuse an oversized response before the upstream is called. */
export function inputBytes(items: readonly InputItem[]): number {
  let bytes = 0;
  for (const item of items) bytes += Buffer.byteLength(JSON.stringify(item));
  return bytes;
}

/** Throws the 400 `stored_response_too_large` when a response of this size may not be stored. */
export function checkStoredSize(bytes: number, limitBytes: number): void {
  if (bytes > limitBytes) throw storedResponseTooLarge(bytes, limitBytes);
}

/** A stored response (findResponse) as the response object `GET /v1/responses/{id}` answers. */
export function storedResponseObject(stored: { response: string; output: readonly string[] }): ResponseObject {
  const settings = readStoredSettings(stored.response);
  return { ...settings, output: stored.output.map((item) => JSON.parse(item) as OutputItem) } as ResponseObject;
}
