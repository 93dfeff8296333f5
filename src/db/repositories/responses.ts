import { type Kysely, sql, type Transaction } from 'kysely';
import type { Database, ResponseState } from '../schema.js';

/**
 * Stored `/v1/responses` answers, one row each with its input and output items as two JSON arrays (migration 0014);
 * `response_item_ids` finds an item by its id within the account. Every read is scoped to an account and to responses
 * not yet expired, so another account's response, a deleted one and an expired one all read as absent. A conversation
 * is replayed by walking `previous_response_id` back from a response (one recursive query); each response stores only
 * its own items. Responses are written by responses-sqlite-writer.ts and responses-postgres-writer.ts.
 *
 * A row with a `state` (migration 0015) is no stored response but stands for one the gateway answered: `unstored`, one
 * too large to store, so that any node tells a client continuing it why it cannot (UnstoredMarker); `in_progress`, one
 * still streaming (its settings as it began), which any node can retrieve, delete, and tell a continuation of it that it
 * has not ended; `deleted`, one deleted while it streamed, read as absent and not replaced when the stream ends (the
 * writers replace only an `in_progress` row). Such rows expire and are deleted like any other; they have no stored
 * items, and no conversation walks through them. An `in_progress` row keeps the ids of the items its stream has shown
 * (its input's, and its output's so far), so that a reference to one is told the response has not ended; and until when
 * its node has said the stream still runs (`streaming_until`, moved on while it does): past that, its node stopped
 * without ending it (killed, or shut down mid-stream), and it reads as failed.
 */

/**
 * How long an `in_progress` row written without `streaming_until` (by a node older than that column) is taken to be
 * streaming: as long as a node now says a row is at least (response-store.ts).
 */
export const defaultStreamLeaseMs = 60_000;

/** Whether an `in_progress` row's node has stopped without ending its stream: it has not said it runs for too long. */
export function streamStopped(
  row: { streaming_until: number | string | null; created_at: number | string },
  now: number,
) {
  const until = row.streaming_until ?? Number(row.created_at) + defaultStreamLeaseMs;
  return Number(until) <= now;
}

/** What an `unstored` row keeps (in its `response` column) of a response answered but too large to store. */
export interface UnstoredMarker {
  /** The bytes it would have taken to store. */
  bytes: number;
  /** The limit it was over (responses.max_stored_bytes when it was answered). */
  limitBytes: number;
}

export function unstoredMarkerJson(marker: UnstoredMarker): string {
  return JSON.stringify({ bytes: marker.bytes, limit_bytes: marker.limitBytes });
}

export function readUnstoredMarker(text: string): UnstoredMarker {
  const parsed = JSON.parse(text) as { bytes?: unknown; limit_bytes?: unknown };
  return { bytes: Number(parsed.bytes), limitBytes: Number(parsed.limit_bytes) };
}

export interface ResponseRecord {
  id: string;
  accountId: string;
  keyId: string;
  model: string;
  previousResponseId: string | null;
  createdAt: number;
  expiresAt: number;
  /** The response object as JSON, without `output`. */
  response: string;
  /** Its input items, a JSON array. */
  inputItems: string;
  /** Its output items, a JSON array (as the client got them). */
  outputItems: string;
  /** The ids of its items, input then output (an item without one is not findable by id). */
  itemIds: readonly string[];
  inputCount: number;
  storedBytes: number;
  /**
   * Responses it continues whose expiry falls short of its retention (conversation-expiry.ts): raised to its own
   * `expiresAt` when still below it, so a conversation in use does not lose its beginning to retention.
   */
  extendedIds?: readonly string[];
  /** Set when the row stands for a response rather than storing it (see above); its items are then empty. */
  state?: ResponseState;
  /** On an `in_progress` row: until when its node says its stream runs (epoch milliseconds). */
  streamingUntil?: number;
}

export interface ConversationTurn {
  responseId: string;
  /** When it expires (epoch milliseconds), as read. */
  expiresAt: number;
  /** Its input items, a JSON array. */
  inputItems: string;
  /** Its output items, a JSON array. */
  outputItems: string;
}

export interface Conversation {
  /** The responses of the conversation, oldest first, ending with the one asked for. */
  responseIds: string[];
  /** Their items, in the same order: each response's input, then its output. */
  turns: ConversationTurn[];
  /**
   * Set when the conversation holds more than `maxBytes` of stored responses, or more than `maxTurns` responses: the
   * walk stopped there and no items were read (`turns` is empty); `bytes` is what it had counted.
   */
  tooLarge?: { bytes: number };
  /** Set when the response asked for was answered but not stored (too large): `responseIds` is it alone, no turns. */
  unstored?: UnstoredMarker;
  /** Set when the response asked for is still streaming (on some node): `responseIds` is it alone, no turns. */
  inProgress?: true;
  /**
   * Set when the response asked for was streaming on a node that stopped before its stream ended: nothing of it was
   * stored but how it began. `responseIds` is it alone, no turns.
   */
  stopped?: true;
}

/** How far back a conversation is followed; far beyond any real one (a longer one is `tooLarge`, never cut short). */
const maxConversationTurns = 100_000;
/** Ids per `in (…)` list, well under SQLite's and PostgreSQL's bound-parameter limits. */
export const idsPerStatement = 500;

export function chunks<Item>(items: readonly Item[], size: number): Item[][] {
  const result: Item[][] = [];
  for (let start = 0; start < items.length; start += size) result.push(items.slice(start, start + size));
  return result;
}

/**
 * Whether an id could be stored at all: PostgreSQL text cannot hold NUL, so no stored id has one, and a query naming
 * one would fail there (a 500 for a client's typo) instead of finding nothing.
 */
export const storableId = (id: string): boolean => !id.includes('\u0000');

export type FoundResponse =
  | {
      /** The response object as JSON, without `output`. */
      response: string;
      /** Its output items, a JSON array. */
      outputItems: string;
      /** Still streaming (on some node): the response as it began. */
      inProgress?: true;
      /** Its stream's node stopped before the stream ended: the response as it began, all that was stored of it. */
      stopped?: true;
      unstored?: undefined;
    }
  | { unstored: UnstoredMarker; inProgress?: undefined };

export async function findResponse(
  db: Kysely<Database>,
  accountId: string,
  id: string,
  now: number,
): Promise<FoundResponse | undefined> {
  if (!storableId(id)) return undefined;
  const row = await db
    .selectFrom('responses')
    .select(['response', 'output_items', 'state', 'streaming_until', 'created_at'])
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  if (!row || row.state === 'deleted') return undefined;
  if (row.state === 'unstored') return { unstored: readUnstoredMarker(row.response) };
  if (row.state === 'in_progress') {
    if (streamStopped(row, now)) return { response: row.response, outputItems: row.output_items, stopped: true };
    return { response: row.response, outputItems: row.output_items, inProgress: true };
  }
  return { response: row.response, outputItems: row.output_items };
}

/**
 * Whether the account's row of this id is marked `deleted` (a response deleted, on some node, while it streamed); false
 * when it is anything else, or there is none (not written yet, or gone).
 */
export async function isMarkedDeleted(db: Kysely<Database>, accountId: string, id: string): Promise<boolean> {
  if (!storableId(id)) return false;
  const row = await db
    .selectFrom('responses')
    .select('state')
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  return row?.state === 'deleted';
}

interface DeletedRow {
  id: string;
  account_id: string;
  item_ids: string;
}

/** Triples per statement: three parameters each, well under the bound-parameter limits. */
const keysPerStatement = 300;

/** Deletes the item keys of responses just deleted (in the same transaction). */
async function deleteItemKeys(transaction: Transaction<Database>, deleted: readonly DeletedRow[]): Promise<void> {
  const keys = deleted.flatMap((row) =>
    (JSON.parse(row.item_ids) as string[]).map((itemId) => sql`(${row.account_id}, ${itemId}, ${row.id})`),
  );
  for (const batch of chunks(keys, keysPerStatement)) {
    await sql`delete from response_item_ids where (account_id, item_id, response_id) in (values ${sql.join(batch)})`.execute(
      transaction,
    );
  }
}

/**
 * Deletes a response of the account (and its items' keys), or the row standing for one not stored; false when there was
 * none to delete. One still streaming is marked `deleted` instead, so that its stream's end does not store it.
 */
export async function deleteResponse(
  db: Kysely<Database>,
  accountId: string,
  id: string,
  now: number,
): Promise<boolean> {
  if (!storableId(id)) return false;
  return db.transaction().execute(async (transaction) => {
    const marked = await transaction
      .updateTable('responses')
      .set({ state: 'deleted' })
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .where('expires_at', '>', now)
      .where('state', '=', 'in_progress')
      .executeTakeFirst();
    if (marked.numUpdatedRows > 0n) return true;
    const deleted = await transaction
      .deleteFrom('responses')
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .where('expires_at', '>', now)
      .where((where) => where.or([where('state', 'is', null), where('state', '=', 'unstored')]))
      .returning(['id', 'account_id', 'item_ids'])
      .execute();
    await deleteItemKeys(transaction, deleted);
    return deleted.length > 0;
  });
}

interface ConversationRow {
  id: string;
  expires_at: number;
  total: number | string;
  previous_response_id: string | null;
  input_items: string | null;
  output_items: string | null;
  state: ResponseState | null;
  /** The `response` column of a row with a state (what it stands for). */
  marker: string | null;
  streaming_until: number | string | null;
  created_at: number | string;
}

/**
 * The conversation a response ends: it and the responses it continues, with their items in order. Undefined when the
 * response is not the account's, or is deleted or expired. A response deleted or expired in the middle ends the walk
 * there: what came before it is gone with it. The walk counts the stored bytes as it goes back and stops past
 * `maxBytes`, reading no items then (`tooLarge`): memory stays bounded however long the chain.
 */
export async function loadConversation(
  db: Kysely<Database>,
  accountId: string,
  id: string,
  now: number,
  maxBytes: number = Number.MAX_SAFE_INTEGER,
  maxTurns: number = maxConversationTurns,
): Promise<Conversation | undefined> {
  if (!storableId(id)) return undefined;
  const result = await sql<ConversationRow>`
    with recursive chain(id, previous_response_id, depth, total) as (
      select id, previous_response_id, 0, cast(stored_bytes as bigint) from responses
      where id = ${id} and account_id = ${accountId} and expires_at > ${now}
      union all
      select responses.id, responses.previous_response_id, chain.depth + 1,
        chain.total + cast(responses.stored_bytes as bigint)
      from responses join chain on responses.id = chain.previous_response_id
      where responses.account_id = ${accountId} and responses.expires_at > ${now} and responses.state is null
        and chain.depth < ${maxTurns} and chain.total <= ${maxBytes}
    )
    select chain.id, responses.expires_at, chain.total, responses.previous_response_id, responses.state,
      responses.streaming_until, responses.created_at,
      case when responses.state is not null then responses.response end as marker,
      case when chain.total <= ${maxBytes} then responses.input_items end as input_items,
      case when chain.total <= ${maxBytes} then responses.output_items end as output_items
    from chain join responses on responses.id = chain.id
    order by chain.depth desc`.execute(db);
  const rows = result.rows;
  if (rows.length === 0) return undefined;
  const responseIds = rows.map((row) => row.id);
  // The response asked for is the last row; only it may have a state (the walk goes through stored responses only).
  const asked = rows.at(-1);
  if (asked?.state === 'deleted') return undefined;
  if (asked?.state === 'unstored') {
    return { responseIds: [asked.id], turns: [], unstored: readUnstoredMarker(asked.marker ?? '{}') };
  }
  if (asked?.state === 'in_progress') {
    if (streamStopped(asked, now)) return { responseIds: [asked.id], turns: [], stopped: true };
    return { responseIds: [asked.id], turns: [], inProgress: true };
  }
  // Oldest first: the first row is where the walk stopped, with the largest total.
  const total = Number(rows[0]?.total);
  if (total > maxBytes) return { responseIds, turns: [], tooLarge: { bytes: total } };
  // Stopped by the turn limit with more before it (rows past it would be maxTurns + 1).
  if (rows.length > maxTurns && rows[0]?.previous_response_id) {
    return { responseIds, turns: [], tooLarge: { bytes: total } };
  }
  return {
    responseIds,
    turns: rows.map((row) => ({
      responseId: row.id,
      expiresAt: Number(row.expires_at),
      inputItems: row.input_items as string,
      outputItems: row.output_items as string,
    })),
  };
}

/**
 * What findItems gives for an item of a response answered but too large to store (its row keeps its items' ids, not
 * the items): a reference to it can be told why it cannot be resolved.
 */
export class UnstoredItem {
  constructor(
    readonly responseId: string,
    readonly marker: UnstoredMarker,
  ) {}
}

/**
 * What findItems gives for an item of a response still streaming (an `in_progress` row keeps the ids of the items its
 * stream has shown, not the items), or whose node stopped before its stream ended (`stopped`): a reference to it can be
 * told why it cannot be resolved.
 */
export class StreamingItem {
  constructor(
    readonly responseId: string,
    readonly stopped: boolean,
  ) {}
}

/**
 * Items of the account's live responses by id (for `item_reference`s), parsed; an id stored twice reads as either
 * copy, one of a response too large to store as an UnstoredItem, and one of a response still streaming as a
 * StreamingItem (each unless a stored response has it too).
 */
export async function findItems(
  db: Kysely<Database>,
  accountId: string,
  ids: readonly string[],
  now: number,
): Promise<Map<string, unknown>> {
  const wanted = new Set(ids.filter(storableId));
  const found = new Map<string, unknown>();
  for (const batch of chunks([...wanted], idsPerStatement)) {
    // Each response once, however many of the ids it holds.
    const rows = await db
      .selectFrom('responses')
      .select(['id', 'input_items', 'output_items', 'state', 'response', 'item_ids', 'streaming_until', 'created_at'])
      .where('id', 'in', (select) =>
        select
          .selectFrom('response_item_ids')
          .select('response_id')
          .where('account_id', '=', accountId)
          .where('item_id', 'in', batch),
      )
      .where('account_id', '=', accountId)
      .where('expires_at', '>', now)
      .where((where) =>
        where.or([where('state', 'is', null), where('state', '=', 'unstored'), where('state', '=', 'in_progress')]),
      )
      .execute();
    const unstored: typeof rows = [];
    const streaming: typeof rows = [];
    for (const row of rows) {
      if (row.state === 'unstored') {
        unstored.push(row);
        continue;
      }
      if (row.state === 'in_progress') {
        streaming.push(row);
        continue;
      }
      for (const text of [row.input_items, row.output_items]) {
        for (const item of JSON.parse(text) as Array<{ id?: unknown }>) {
          if (typeof item.id === 'string' && wanted.has(item.id) && !found.has(item.id)) found.set(item.id, item);
        }
      }
    }
    for (const row of unstored) {
      const marker = readUnstoredMarker(row.response);
      for (const itemId of JSON.parse(row.item_ids) as string[]) {
        if (wanted.has(itemId) && !found.has(itemId)) found.set(itemId, new UnstoredItem(row.id, marker));
      }
    }
    for (const row of streaming) {
      const item = new StreamingItem(row.id, streamStopped(row, now));
      for (const itemId of JSON.parse(row.item_ids) as string[]) {
        if (wanted.has(itemId) && !found.has(itemId)) found.set(itemId, item);
      }
    }
  }
  return found;
}

/**
 * Moves on `streaming_until` of the rows standing for these responses while they stream (`in_progress`): their node
 * says they still run. Rows not written yet, replaced by their response, or deleted are left as they are.
 */
export async function renewStreamingRows(db: Kysely<Database>, ids: readonly string[], until: number): Promise<void> {
  for (const batch of chunks(ids, idsPerStatement)) {
    await db
      .updateTable('responses')
      .set({ streaming_until: until })
      .where('id', 'in', batch)
      .where('state', '=', 'in_progress')
      .execute();
  }
}

/**
 * Deletes expired responses (and their items' keys) in batches of `batchSize` responses, each a short transaction,
 * pausing between them so requests interleave; returns how many were deleted.
 */
export async function deleteExpiredResponses(
  db: Kysely<Database>,
  now: number,
  batchSize: number,
  pauseMs = 20,
): Promise<number> {
  let deleted = 0;
  for (;;) {
    const expired = await db
      .selectFrom('responses')
      .select('id')
      .where('expires_at', '<=', now)
      .limit(batchSize)
      .execute();
    if (expired.length === 0) return deleted;
    deleted += await db.transaction().execute(async (transaction) => {
      // Checked again as it is deleted: a conversation continued meanwhile has moved its expiry on.
      const rows = await transaction
        .deleteFrom('responses')
        .where(
          'id',
          'in',
          expired.map((row) => row.id),
        )
        .where('expires_at', '<=', now)
        .returning(['id', 'account_id', 'item_ids'])
        .execute();
      await deleteItemKeys(transaction, rows);
      return rows.length;
    });
    if (expired.length < batchSize) return deleted;
    await new Promise((resolve) => setTimeout(resolve, pauseMs));
  }
}
