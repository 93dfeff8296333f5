import { type ResponseRecord, storableId, unstoredMarkerJson } from '../../../db/repositories/responses.js';
import { type AncestorExpiry, conversationExpiry } from './conversation-expiry.js';
import { storedResponseTooLarge } from './errors.js';
import { readStoredSettings, storedSettingsJson } from './stored-settings.js';
import type { InputItem, OutputItem, ResponseObject } from './types.js';

/**
 * A finished response as the row the database keeps (db/repositories/responses.ts), and back: the object without its
 * output (compacted: stored-settings.ts), its input items and its output items as two JSON arrays, each serialized
 * once; the output's is also what the client is sent. The record holds the account and key ids, never the key. Its
 * size (the JSON of the object and of its items, as the client sees them) is bounded by `responses.max_stored_bytes`.
 */

export interface RecordContext {
  accountId: string;
  keyId: string;
  /** The response's normalized input items (stored-items.ts). */
  inputItems: readonly InputItem[];
  /** Epoch milliseconds. */
  now: number;
  retentionMs: number;
  /** The responses it continues (the conversation replayed before it), whose expiry it may extend. */
  ancestors?: readonly AncestorExpiry[];
}

/** The ids an `item_reference` may name; one that cannot be stored (a NUL in it) is never looked up, so not kept. */
function itemIds(items: ReadonlyArray<InputItem | OutputItem>, into: string[]): void {
  for (const item of items) {
    if (typeof item.id === 'string' && item.id !== '' && storableId(item.id)) into.push(item.id);
  }
}

export interface StoredResponse {
  record: ResponseRecord;
  /** The whole response object's JSON, as the client gets it (the record holds its settings compacted). */
  json: string;
}

export function toResponseRecord(response: ResponseObject, context: RecordContext): StoredResponse {
  const { output, ...settings } = response;
  const settingsJson = JSON.stringify(settings);
  const inputItems = JSON.stringify(context.inputItems);
  const outputItems = JSON.stringify(output);
  const ids: string[] = [];
  itemIds(context.inputItems, ids);
  itemIds(output, ids);
  const expiry = conversationExpiry(context.ancestors ?? [], context.now, context.retentionMs);
  const record: ResponseRecord = {
    id: response.id,
    accountId: context.accountId,
    keyId: context.keyId,
    // A native upstream's object may leave it out; the row needs one (an empty name, rather than a lost response).
    model: typeof response.model === 'string' ? response.model : '',
    previousResponseId: response.previous_response_id,
    createdAt: context.now,
    expiresAt: expiry.expiresAt,
    response: storedSettingsJson(settings, settingsJson),
    inputItems,
    outputItems,
    itemIds: ids,
    inputCount: context.inputItems.length,
    storedBytes: Buffer.byteLength(settingsJson) + Buffer.byteLength(inputItems) + Buffer.byteLength(outputItems),
    ...(expiry.extendedIds.length > 0 ? { extendedIds: expiry.extendedIds } : {}),
  };
  // The object's members, then its output: the order of members means nothing in JSON.
  const json = `${settingsJson.slice(0, -1)}${settingsJson.length > 2 ? ',' : ''}"output":${outputItems}}`;
  return { record, json };
}

/**
 * The row that stands for a response grown too large to store (the record it would have been): its id, account, key
 * and expiry, what it would have taken, and its items' ids but not the items. Written like any response, so every node can tell a client
 * continuing it that it was answered but not stored, rather than "not found". It continues nothing (it moves no
 * conversation's expiry), and nothing continues it.
 */
export function toUnstoredRecord(record: ResponseRecord, limitBytes: number): ResponseRecord {
  const response = unstoredMarkerJson({ bytes: record.storedBytes, limitBytes });
  return {
    id: record.id,
    accountId: record.accountId,
    keyId: record.keyId,
    model: record.model,
    previousResponseId: null,
    createdAt: record.createdAt,
    expiresAt: record.expiresAt,
    response,
    inputItems: '[]',
    outputItems: '[]',
    // Its items' ids only: a reference to one is told the response was not stored, rather than "not found".
    itemIds: record.itemIds,
    inputCount: 0,
    storedBytes: Buffer.byteLength(response) + 4,
    state: 'unstored',
  };
}

/**
 * The row that stands for a response while it streams (`in_progress`): its settings as it began and its input items'
 * ids, no items, so any node can retrieve it (as it began), delete it, and tell a continuation of it, or a reference to
 * one of its items, that it has not ended. The ids of its output items are added as its stream shows them
 * (ResponseStore.itemShown), and its node says until when it still runs (`streamingUntil`, set by the store). The
 * response replaces it when it ends (both engines' writers); it is written only when a batch is written before that.
 */
export function toInProgressRecord(
  response: ResponseObject,
  context: Pick<RecordContext, 'accountId' | 'keyId' | 'inputItems' | 'now' | 'retentionMs'>,
): ResponseRecord {
  const { output: _output, ...settings } = response;
  // Kept compact without serializing it whole first: this runs for every stored stream (docs/performance.md).
  const compact = storedSettingsJson(settings, '');
  const settingsJson = compact === '' ? JSON.stringify(settings) : compact;
  const ids: string[] = [];
  itemIds(context.inputItems, ids);
  return {
    id: response.id,
    accountId: context.accountId,
    keyId: context.keyId,
    model: typeof response.model === 'string' ? response.model : '',
    previousResponseId: null,
    createdAt: context.now,
    expiresAt: context.now + context.retentionMs,
    response: settingsJson,
    inputItems: '[]',
    outputItems: '[]',
    itemIds: ids,
    inputCount: 0,
    storedBytes: Buffer.byteLength(settingsJson) + 4,
    state: 'in_progress',
  };
}

/**
 * What a response deleted while it streamed leaves (the record it would have been): a row marked `deleted` over the one
 * that stood for it, so no node retrieves it and its stream's end on another node does not store it. It keeps the ids
 * the row had (their keys may be written already), so that they go with it when it expires.
 */
export function toDeletedRecord(record: ResponseRecord): ResponseRecord {
  return { ...toUnstoredRecord(record, 0), response: '{}', storedBytes: 6, state: 'deleted' };
}

/** Throws the 400 `stored_response_too_large` when a response of this size may not be stored. */
export function checkStoredSize(bytes: number, limitBytes: number): void {
  if (bytes > limitBytes) throw storedResponseTooLarge(bytes, limitBytes);
}

/**
 * A response whose stream's node stopped before the stream ended (findResponse's `stopped`), as `GET` answers it: as it
 * began, failed, saying why. Nothing else of it was stored.
 */
export function stoppedResponseObject(stored: { response: string; outputItems: string }): ResponseObject {
  return {
    ...storedResponseObject(stored),
    status: 'failed',
    error: {
      code: 'server_error',
      message:
        'The gateway node serving this response stopped before its stream ended (it was shut down or failed): nothing of it was stored but how it began. Send the request again.',
    },
  } as ResponseObject;
}

/** A stored response (findResponse) as the response object `GET /v1/responses/{id}` answers. */
export function storedResponseObject(stored: { response: string; outputItems: string }): ResponseObject {
  const settings = readStoredSettings(stored.response);
  return { ...settings, output: JSON.parse(stored.outputItems) as OutputItem[] } as ResponseObject;
}
