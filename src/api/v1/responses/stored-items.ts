import { type ConversationTurn, StreamingItem, UnstoredItem } from '../../../db/repositories/responses.js';
import { itemNotFound, itemNotStored, itemOfResponseInProgress, itemOfStoppedResponse } from './errors.js';
import { type ItemIdPrefix, newItemId } from './ids.js';
import type { InputItem, ItemReference, MessageItem, ResponsesRequest } from './types.js';

/**
 * Items as the gateway stores and replays them:
 * - input is normalized once (a string becomes a user message; "easy" messages get `type` and content parts; every
 *   item gets an id), so stored input lists, replays and answers `item_reference`s the way OpenAI's does;
 * - `item_reference`s are replaced by the items they name (found among the account's stored responses) before
 *   translation and storage, so a stored conversation never depends on another response still existing;
 * - a replayed conversation is its responses' input and output items in order, function calls included (output items
 *   are valid input items as they are).
 */

const idPrefixes: Record<string, ItemIdPrefix> = {
  message: 'msg',
  function_call: 'fc',
  function_call_output: 'fco',
  reasoning: 'rs',
};

function normalizeMessage(item: MessageItem): MessageItem {
  if (typeof item.content !== 'string') return item.type === 'message' ? item : { ...item, type: 'message' };
  const content =
    item.role === 'assistant'
      ? [{ type: 'output_text', text: item.content, annotations: [] }]
      : [{ type: 'input_text', text: item.content }];
  return { ...item, type: 'message', content };
}

/**
 * The request's input as stored items: typed, with content parts and an id each. An item whose id is already taken,
 * by an item of the conversation it continues (`takenIds`: e.g. an item_reference to the previous response's output)
 * or earlier in the same input (a client reusing an id), is stored under a new id: input_items pages by item id, and a
 * cursor naming two items could page the same item forever.
 */
export function normalizeInput(input: ResponsesRequest['input'], takenIds?: ReadonlySet<string>): InputItem[] {
  if (input === undefined || input === null) return [];
  if (typeof input === 'string') {
    return [{ id: newItemId('msg'), type: 'message', role: 'user', content: [{ type: 'input_text', text: input }] }];
  }
  const used = new Set<string>();
  return input.map((item) => {
    const typed = item.type === undefined || item.type === 'message' ? normalizeMessage(item as MessageItem) : item;
    const prefix = idPrefixes[typed.type ?? 'message'] ?? 'item';
    if (typeof typed.id !== 'string' || typed.id === '') return { id: newItemId(prefix), ...typed };
    if (used.has(typed.id) || takenIds?.has(typed.id)) return { ...typed, id: newItemId(prefix) };
    used.add(typed.id);
    return typed;
  });
}

/** The ids of items (a replayed conversation's), for normalizeInput. */
export function itemIdsOf(items: readonly InputItem[]): Set<string> {
  const ids = new Set<string>();
  for (const item of items) if (typeof item.id === 'string' && item.id !== '') ids.add(item.id);
  return ids;
}

/** The ids of the input's `item_reference`s, to look up before translating. */
export function itemReferenceIds(input: ResponsesRequest['input']): string[] {
  if (!Array.isArray(input)) return [];
  const ids: string[] = [];
  for (const item of input) if (item.type === 'item_reference') ids.push((item as ItemReference).id);
  return ids;
}

/**
 * The input with each `item_reference` replaced by the stored item (as findItems returns it); a 404 naming the
 * reference when it is not the account's or no longer stored, a 409 when its response is still streaming (on another
 * node). The same array when there are none.
 */
export function resolveItemReferences(
  input: ResponsesRequest['input'],
  found: ReadonlyMap<string, unknown>,
): ResponsesRequest['input'] {
  if (!Array.isArray(input) || !input.some((item) => item.type === 'item_reference')) return input;
  return input.map((item, index) => {
    if (item.type !== 'item_reference') return item;
    const id = (item as ItemReference).id;
    const stored = found.get(id);
    if (stored === undefined) throw itemNotFound(id, `input[${index}].id`);
    if (stored instanceof UnstoredItem) {
      const { responseId, marker } = stored;
      throw itemNotStored(id, `input[${index}].id`, responseId, marker.bytes, marker.limitBytes);
    }
    if (stored instanceof StreamingItem) {
      const param = `input[${index}].id`;
      if (stored.stopped) throw itemOfStoppedResponse(id, param, stored.responseId);
      throw itemOfResponseInProgress(id, param, stored.responseId);
    }
    return stored as InputItem;
  });
}

/** A stored conversation (loadConversation) as the items to place before the new input: each turn's input, then output. */
export function replayItems(conversation: { turns: readonly ConversationTurn[] }): InputItem[] {
  const items: InputItem[] = [];
  for (const turn of conversation.turns) {
    items.push(...(JSON.parse(turn.inputItems) as InputItem[]), ...(JSON.parse(turn.outputItems) as InputItem[]));
  }
  return items;
}

/**
 * The items a stored response was generated from (what `GET /v1/responses/{id}/input_items` lists): the conversation
 * loaded up to it (loadConversation), without its own output.
 */
export function inputItemsOf(conversation: { turns: readonly ConversationTurn[] }): InputItem[] {
  const last = conversation.turns.at(-1);
  if (!last) return [];
  const before = replayItems({ turns: conversation.turns.slice(0, -1) });
  return [...before, ...(JSON.parse(last.inputItems) as InputItem[])];
}
