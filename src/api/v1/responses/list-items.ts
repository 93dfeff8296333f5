import { apiError } from '../../../errors/api-error.js';

/**
 * A page of items as OpenAI's list endpoints answer (`GET /v1/responses/{id}/input_items`): `order` (`desc`, newest
 * first, by default), `after` / `before` an item id, `limit` 1–100 (20 by default), and `{object: "list", data,
 * first_id, last_id, has_more}`. The items are the conversation up to the response (its input and everything replayed
 * before it), few enough to page in memory.
 */

export interface ListQuery {
  after?: string;
  before?: string;
  limit?: number;
  order?: 'asc' | 'desc';
}

export interface ItemPage<Item> {
  object: 'list';
  data: Item[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

/** Reads the query string of a list request; a 400 naming the parameter for a bad value. */
export function parseListQuery(query: URLSearchParams): ListQuery {
  const parsed: ListQuery = {};
  const limit = query.get('limit');
  if (limit !== null) {
    const value = Number(limit);
    if (!/^\d+$/.test(limit) || value < 1 || value > 100) {
      throw apiError(
        'invalid_value',
        `Invalid 'limit': expected an integer from 1 to 100, but got '${limit.slice(0, 32)}'.`,
        { param: 'limit' },
      );
    }
    parsed.limit = value;
  }
  const order = query.get('order');
  if (order !== null) {
    if (order !== 'asc' && order !== 'desc') {
      throw apiError(
        'invalid_value',
        `Invalid value: '${order.slice(0, 32)}'. Supported values are: 'asc' and 'desc'.`,
        { param: 'order' },
      );
    }
    parsed.order = order;
  }
  const after = query.get('after');
  if (after !== null && after !== '') parsed.after = after;
  const before = query.get('before');
  if (before !== null && before !== '') parsed.before = before;
  return parsed;
}

/**
 * Where a cursor stands; a 400 naming it when it names no item of the list (a typo, or an item of a response deleted
 * since the last page): paging on from the start instead would hand the client items it already has.
 */
function cursorIndex<Item extends { id?: unknown }>(ordered: readonly Item[], cursor: string, param: string): number {
  const at = ordered.findIndex((item) => item.id === cursor);
  if (at === -1) {
    throw apiError('invalid_value', `Invalid '${param}': no item with id '${cursor.slice(0, 128)}' in this list.`, {
      param,
    });
  }
  return at;
}

/** One page of `items` (given oldest first). */
export function pageItems<Item extends { id?: unknown }>(items: readonly Item[], query: ListQuery): ItemPage<Item> {
  const ordered = query.order === 'asc' ? [...items] : [...items].reverse();
  const limit = query.limit ?? 20;
  let start = 0;
  let end = ordered.length;
  if (query.after !== undefined) start = cursorIndex(ordered, query.after, 'after') + 1;
  if (query.before !== undefined) end = cursorIndex(ordered, query.before, 'before');
  // With only `before`, the page is the items just before the cursor.
  const window = ordered.slice(start, Math.max(start, end));
  const data = query.before !== undefined && query.after === undefined ? window.slice(-limit) : window.slice(0, limit);
  const idOf = (item: Item | undefined) => (typeof item?.id === 'string' ? item.id : null);
  return {
    object: 'list',
    data,
    first_id: idOf(data[0]),
    last_id: idOf(data.at(-1)),
    has_more: data.length < window.length,
  };
}
