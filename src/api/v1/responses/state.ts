import type { ParsedBody } from '../../../server/read-body.js';
import type { Exchange } from '../pipeline/endpoint.js';
import type { AncestorExpiry } from './conversation-expiry.js';
import {
  conversationTooLarge,
  previousResponseNotFound,
  previousResponseNotStored,
  previousResponseStopped,
  responseInProgress,
} from './errors.js';
import type { ResponseStore } from './response-store.js';
import { itemIdsOf, itemReferenceIds, normalizeInput, replayItems, resolveItemReferences } from './stored-items.js';
import { checkStoredSize, type RecordContext, toInProgressRecord, toResponseRecord } from './stored-response.js';
import type { InputItem, ResponseObject, ResponsesRequest } from './types.js';

/**
 * What a request reads of the stored state before it is sent, and what it leaves there after. Only a request with
 * `previous_response_id` or `item_reference`s reads the database; any other request's only contact with it is the
 * batched write of its answer (response-store.ts).
 */

export interface RequestState {
  /** The request with its item references replaced by the items they name. */
  request: ResponsesRequest;
  /** The conversation replayed before the input, oldest first. */
  history: InputItem[];
  /** The responses of that conversation with their expiry as read (kept as long as the new one). */
  ancestors: readonly AncestorExpiry[];
}

/** What a request may bring in from the stored state, besides its own body. */
export interface StateLimits {
  /** The request body's size (what checkStorable measured). */
  bodyBytes: number;
  /** responses.max_stored_bytes. */
  maxStoredBytes: number;
}

export async function loadState(
  store: ResponseStore,
  request: ResponsesRequest,
  accountId: string,
  limits: StateLimits,
): Promise<RequestState> {
  let history: InputItem[] = [];
  let ancestors: readonly AncestorExpiry[] = [];
  const previous = request.previous_response_id;
  if (typeof previous === 'string') {
    const conversation = await store.conversation(accountId, previous);
    // Another account's, deleted, expired and never stored (store: false) all read the same.
    if (!conversation) throw previousResponseNotFound(previous);
    // One answered but too large to store says so, on any node.
    const { unstored } = conversation;
    if (unstored) throw previousResponseNotStored(previous, unstored.bytes, unstored.limitBytes);
    // Still streaming on another node (this node waits for its own streams' end).
    if (conversation.inProgress) throw responseInProgress(previous, 'previous_response_id');
    // Its stream's node stopped before it ended: nothing of it was stored to replay.
    if (conversation.stopped) throw previousResponseStopped(previous);
    if (conversation.tooLarge) {
      throw conversationTooLarge(conversation.tooLarge.bytes, store.maxConversationBytes, 'previous_response_id');
    }
    history = replayItems(conversation);
    // Only the ids and expiries are kept for the save: the rows' JSON is not held through the upstream call.
    ancestors = conversation.turns.map((turn) => ({ responseId: turn.responseId, expiresAt: turn.expiresAt }));
  }
  const references = itemReferenceIds(request.input);
  if (references.length === 0) return { request, history, ancestors };
  const found = await store.items(accountId, references);
  const input = resolveItemReferences(request.input, found);
  checkReferencedSize(request, references, found, store.maxConversationBytes, limits);
  return { request: { ...request, input }, history, ancestors };
}

/**
 * A reference is a few bytes in the body but its whole item once resolved (sent upstream, and stored as input): a body
 * of kilobytes referencing one large item many times would be gigabytes. The resolved input is bounded like a
 * conversation, and, when it is to be stored, like a stored response.
 */
function checkReferencedSize(
  request: ResponsesRequest,
  references: readonly string[],
  found: ReadonlyMap<string, unknown>,
  maxConversationBytes: number,
  limits: StateLimits,
): void {
  const sizes = new Map<string, number>();
  let bytes = 0;
  for (const id of references) {
    let size = sizes.get(id);
    if (size === undefined) {
      size = Buffer.byteLength(JSON.stringify(found.get(id)));
      sizes.set(id, size);
    }
    bytes += size;
  }
  if (request.store !== false) checkStoredSize(limits.bodyBytes + bytes, limits.maxStoredBytes);
  if (bytes > maxConversationBytes) throw conversationTooLarge(bytes, maxConversationBytes, 'input');
}

/** Refuses, before the upstream is called, a request too large to store when it asks to be stored. */
export function checkStorable(request: ResponsesRequest, body: ParsedBody | undefined, limitBytes: number): void {
  if (request.store === false || !body) return;
  // The body bounds the input items as stored (normalizing adds ids and part types: a few bytes per item).
  checkStoredSize(body.bytes.length, limitBytes);
}

export interface Storing {
  store: ResponseStore;
  accountId: string;
  keyId: string;
  retentionMs: number;
  maxStoredBytes: number;
  /** The input as given (normalized here: ids and content parts, as input_items lists them). */
  input: ResponsesRequest['input'];
  /**
   * The response it continues, as the client named it: a native upstream's answer says none (the gateway sent it the
   * history instead), and the stored chain must not break there.
   */
  previousResponseId: string | null;
  /** The ids of the items of the conversation it continues: an input item reusing one is stored under a new id. */
  historyItemIds: ReadonlySet<string> | undefined;
  ancestors: readonly AncestorExpiry[];
  /**
   * The input normalized when its stream began (beginStoring): its row then names the same item ids as the response
   * stored when it ends.
   */
  normalizedInput?: InputItem[];
}

/** What a stored response needs besides the finished response; undefined when the request is not to be stored. */
export function storingFor(exchange: Exchange, state: RequestState, store: ResponseStore): Storing | undefined {
  if (state.request.store === false) return undefined;
  const settings = exchange.services.config.responses;
  return {
    store,
    accountId: exchange.principal.accountId,
    keyId: exchange.principal.keyId,
    retentionMs: settings.retentionMs,
    maxStoredBytes: settings.maxStoredBytes,
    input: state.request.input,
    previousResponseId: state.request.previous_response_id ?? null,
    historyItemIds: state.history.length > 0 ? itemIdsOf(state.history) : undefined,
    ancestors: state.ancestors,
  };
}

/**
 * A stored response's stream has shown the client its id (in `response`, as it began): from here it is found while it
 * streams, on this node as far as it got (`snapshot`), on others as it began once a batch is written.
 */
export function beginStoring(storing: Storing, response: ResponseObject, snapshot: () => ResponseObject): void {
  storing.normalizedInput = normalizeInput(storing.input, storing.historyItemIds);
  const row = toInProgressRecord(response, {
    accountId: storing.accountId,
    keyId: storing.keyId,
    inputItems: storing.normalizedInput,
    now: Date.now(),
    retentionMs: storing.retentionMs,
  });
  storing.store.begin(storing.accountId, response.id, snapshot, row);
}

/** The stream of a stored response has shown the client an output item (its `response.output_item.added`). */
export function showItem(storing: Storing, responseId: string, item: unknown): void {
  const id = (item as { id?: unknown } | null)?.id;
  if (typeof id === 'string' && id !== '') storing.store.itemShown(storing.accountId, responseId, id);
}

export interface SavedResponse {
  /** The response object's JSON as the client gets it. */
  json: string;
  /** False when it grew past responses.max_stored_bytes: the client's answer must then say `"store": false`. */
  stored: boolean;
}

/**
 * Queues a finished response for storage, and returns its JSON as a whole (the stored pieces joined: the response is
 * serialized once for the database and the client). One grown past the size limit while it was generated is not
 * stored, but its answer is still given, saying `"store": false`; the log says so, and a row saying so is stored in its
 * place: a continuation of it on any node gets 400 stored_response_too_large naming previous_response_id.
 */
export function saveResponse(storing: Storing, answer: ResponseObject, exchange: Exchange): SavedResponse {
  const previous = storing.previousResponseId;
  const response = answer.previous_response_id === previous ? answer : { ...answer, previous_response_id: previous };
  const context: RecordContext = {
    accountId: storing.accountId,
    keyId: storing.keyId,
    inputItems: storing.normalizedInput ?? normalizeInput(storing.input, storing.historyItemIds),
    now: Date.now(),
    retentionMs: storing.retentionMs,
    ancestors: storing.ancestors,
  };
  const { record, json } = toResponseRecord(response, context);
  if (record.storedBytes > storing.maxStoredBytes) {
    exchange.services.logger.warn(
      { requestId: exchange.requestId, responseId: response.id, bytes: record.storedBytes },
      'response grew larger than responses.max_stored_bytes: answered with store: false, not stored',
    );
    storing.store.refuse(record, storing.maxStoredBytes);
    return { json: JSON.stringify({ ...response, store: false }), stored: false };
  }
  storing.store.save(record);
  return { json, stored: true };
}
