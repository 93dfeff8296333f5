import { type Kysely, sql } from 'kysely';
import type { Database } from '../schema.js';

/**
 * Stored `/v1/responses` answers. Every read is scoped to an account and to responses not yet expired, so another
 * account's response, a deleted one and an expired one all read as absent. A conversation is replayed by walking
 * `previous_response_id` back from a response (one recursive query); each response stores only its own items.
 */

export interface StoredItemJson {
  id: string;
  /** The item as JSON. */
  json: string;
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
  /** Its input items, then its output items. */
  items: StoredItemJson[];
  inputCount: number;
  storedBytes: number;
  /**
   * The responses it continues (from loadConversation): they are kept at least as long as this one, so a
   * conversation in use does not lose its beginning to retention.
   */
  conversationIds?: readonly string[];
}

export interface ConversationItem {
  responseId: string;
  /** True for an output item of its response. */
  output: boolean;
  itemId: string;
  json: string;
}

export interface Conversation {
  /** The responses of the conversation, oldest first, ending with the one asked for. */
  responseIds: string[];
  /** Their items in conversation order: each response's input, then its output. */
  items: ConversationItem[];
}

/** How far back a conversation is followed; far beyond any real one, it only bounds a malformed chain. */
const maxConversationLength = 100_000;
/** Ids per `in (…)` list, well under SQLite's and PostgreSQL's bound-parameter limits. */
const idsPerStatement = 500;

function chunks<Item>(items: readonly Item[], size: number): Item[][] {
  const result: Item[][] = [];
  for (let start = 0; start < items.length; start += size) result.push(items.slice(start, start + size));
  return result;
}

/** Rows per multi-row insert: a statement compiled per hundred rows, not per row, well under parameter limits. */
const rowsPerInsert = 100;

/**
 * Stores responses in one transaction (the gateway batches its writes): their rows and items in multi-row inserts,
 * then the expiry of the conversations they continue.
 */
export async function insertResponses(db: Kysely<Database>, records: readonly ResponseRecord[]): Promise<void> {
  if (records.length === 0) return;
  const responseRows = records.map((record) => ({
    id: record.id,
    account_id: record.accountId,
    key_id: record.keyId,
    model: record.model,
    previous_response_id: record.previousResponseId,
    created_at: record.createdAt,
    expires_at: record.expiresAt,
    input_count: record.inputCount,
    stored_bytes: record.storedBytes,
    response: record.response,
  }));
  const itemRows = records.flatMap((record) =>
    record.items.map((item, position) => ({
      response_id: record.id,
      position,
      account_id: record.accountId,
      item_id: item.id,
      item: item.json,
    })),
  );
  await db.transaction().execute(async (transaction) => {
    for (const batch of chunks(responseRows, rowsPerInsert)) {
      await transaction.insertInto('responses').values(batch).execute();
    }
    for (const batch of chunks(itemRows, rowsPerInsert)) {
      await transaction.insertInto('response_items').values(batch).execute();
    }
    for (const record of records) {
      for (const ids of chunks(record.conversationIds ?? [], idsPerStatement)) {
        await transaction
          .updateTable('responses')
          .set({ expires_at: record.expiresAt })
          .where('account_id', '=', record.accountId)
          .where('id', 'in', ids)
          .where('expires_at', '<', record.expiresAt)
          .execute();
      }
    }
  });
}

export interface FoundResponse {
  /** The response object as JSON, without `output`. */
  response: string;
  /** Its output items as JSON, in order. */
  output: string[];
}

export async function findResponse(
  db: Kysely<Database>,
  accountId: string,
  id: string,
  now: number,
): Promise<FoundResponse | undefined> {
  const row = await db
    .selectFrom('responses')
    .select(['response', 'input_count'])
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  if (!row) return undefined;
  const items = await db
    .selectFrom('response_items')
    .select('item')
    .where('response_id', '=', id)
    .where('position', '>=', row.input_count)
    .orderBy('position')
    .execute();
  return { response: row.response, output: items.map((item) => item.item) };
}

/** Deletes a response of the account (its items go with it); false when there was none to delete. */
export async function deleteResponse(
  db: Kysely<Database>,
  accountId: string,
  id: string,
  now: number,
): Promise<boolean> {
  const result = await db
    .deleteFrom('responses')
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

interface ConversationRow {
  response_id: string;
  depth: number | string;
  input_count: number | string;
  position: number | string | null;
  item_id: string | null;
  item: string | null;
}

/**
 * The conversation a response ends: it and the responses it continues, with their items in order. Undefined when the
 * response is not the account's, or is deleted or expired. A response deleted or expired in the middle ends the walk
 * there: what came before it is gone with it.
 */
export async function loadConversation(
  db: Kysely<Database>,
  accountId: string,
  id: string,
  now: number,
): Promise<Conversation | undefined> {
  const result = await sql<ConversationRow>`
    with recursive chain(id, previous_response_id, input_count, depth) as (
      select id, previous_response_id, input_count, 0 from responses
      where id = ${id} and account_id = ${accountId} and expires_at > ${now}
      union all
      select responses.id, responses.previous_response_id, responses.input_count, chain.depth + 1
      from responses join chain on responses.id = chain.previous_response_id
      where responses.account_id = ${accountId} and responses.expires_at > ${now} and chain.depth < ${maxConversationLength}
    )
    select chain.id as response_id, chain.depth, chain.input_count, response_items.position, response_items.item_id,
      response_items.item
    from chain left join response_items on response_items.response_id = chain.id
    order by chain.depth desc, response_items.position asc`.execute(db);
  if (result.rows.length === 0) return undefined;
  const responseIds: string[] = [];
  const items: ConversationItem[] = [];
  for (const row of result.rows) {
    if (responseIds.at(-1) !== row.response_id) responseIds.push(row.response_id);
    if (row.item === null || row.item_id === null || row.position === null) continue;
    items.push({
      responseId: row.response_id,
      output: Number(row.position) >= Number(row.input_count),
      itemId: row.item_id,
      json: row.item,
    });
  }
  return { responseIds, items };
}

/** Items of the account's live responses by id (for `item_reference`s); an id stored twice reads as either copy. */
export async function findItems(
  db: Kysely<Database>,
  accountId: string,
  ids: readonly string[],
  now: number,
): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  for (const batch of chunks([...new Set(ids)], idsPerStatement)) {
    const rows = await db
      .selectFrom('response_items')
      .innerJoin('responses', 'responses.id', 'response_items.response_id')
      .select(['response_items.item_id', 'response_items.item'])
      .where('response_items.account_id', '=', accountId)
      .where('response_items.item_id', 'in', batch)
      .where('responses.expires_at', '>', now)
      .execute();
    for (const row of rows) if (!found.has(row.item_id)) found.set(row.item_id, row.item);
  }
  return found;
}

/**
 * Deletes expired responses (and their items) in batches of `batchSize` responses, each a short statement, pausing
 * between them so requests interleave; returns how many were deleted.
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
    const result = await db
      .deleteFrom('responses')
      .where(
        'id',
        'in',
        expired.map((row) => row.id),
      )
      .where('expires_at', '<=', now)
      .executeTakeFirst();
    deleted += Number(result.numDeletedRows);
    if (expired.length < batchSize) return deleted;
    await new Promise((resolve) => setTimeout(resolve, pauseMs));
  }
}
