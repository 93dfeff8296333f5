import { CompiledQuery, type Kysely, type Transaction } from 'kysely';
import { integerArrayLiteral, textArrayLiteral } from '../postgres-arrays.js';
import type { Database } from '../schema.js';
import type { ResponseRecord } from './responses.js';

/**
 * Stored responses on PostgreSQL, a batch in one transaction: the rows in one `insert … select * from unnest(…)` with
 * one array parameter per column, their items' keys in another, then the expiry of the conversations they continue.
 * A query-builder multi-row insert built, compiled and serialized a value per row and column on the event loop
 * (docs/performance.md, "`/v1/responses`"). SQLite writes the same rows through prepared statements
 * (responses-sqlite-writer.ts).
 */

const insertRowsSql = `insert into responses (id, account_id, key_id, model, previous_response_id, created_at,
    expires_at, input_count, stored_bytes, response, input_items, output_items, item_ids)
  select * from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int8[], $7::int8[],
    $8::int4[], $9::int4[], $10::text[], $11::text[], $12::text[], $13::text[])`;

// An item may appear twice in one response (a client reusing an id): its key once.
const insertItemKeysSql = `insert into response_item_ids (account_id, item_id, response_id)
  select * from unnest($1::text[], $2::text[], $3::text[]) on conflict do nothing`;

const extendExpirySql =
  'update responses set expires_at = $1 where account_id = $2 and id = any($3::text[]) and expires_at < $1';

/**
 * Response bytes per statement: a column's array stays far below PostgreSQL's 1 GB per value, and its literal (a copy
 * of the batch's items on the event loop) small, when a queue of large responses is written at once.
 */
const bytesPerStatement = 16 * 1024 * 1024;

/** The records in runs of at most bytesPerStatement bytes (a larger record alone). */
function byteRuns(records: readonly ResponseRecord[]): ResponseRecord[][] {
  const runs: ResponseRecord[][] = [];
  let run: ResponseRecord[] = [];
  let bytes = 0;
  for (const record of records) {
    if (run.length > 0 && bytes + record.storedBytes > bytesPerStatement) {
      runs.push(run);
      run = [];
      bytes = 0;
    }
    run.push(record);
    bytes += record.storedBytes;
  }
  if (run.length > 0) runs.push(run);
  return runs;
}

async function insertRows(transaction: Transaction<Database>, records: readonly ResponseRecord[]): Promise<void> {
  const column = <Value>(value: (record: ResponseRecord) => Value): Value[] => records.map(value);
  const parameters = [
    textArrayLiteral(column((record) => record.id)),
    textArrayLiteral(column((record) => record.accountId)),
    textArrayLiteral(column((record) => record.keyId)),
    textArrayLiteral(column((record) => record.model)),
    textArrayLiteral(column((record) => record.previousResponseId)),
    integerArrayLiteral(column((record) => record.createdAt)),
    integerArrayLiteral(column((record) => record.expiresAt)),
    integerArrayLiteral(column((record) => record.inputCount)),
    integerArrayLiteral(column((record) => record.storedBytes)),
    textArrayLiteral(column((record) => record.response)),
    textArrayLiteral(column((record) => record.inputItems)),
    textArrayLiteral(column((record) => record.outputItems)),
    textArrayLiteral(column((record) => JSON.stringify(record.itemIds))),
  ];
  await transaction.executeQuery(CompiledQuery.raw(insertRowsSql, parameters));
}

async function insertItemKeys(transaction: Transaction<Database>, records: readonly ResponseRecord[]): Promise<void> {
  const accountIds: string[] = [];
  const itemIds: string[] = [];
  const responseIds: string[] = [];
  for (const record of records) {
    for (const itemId of record.itemIds) {
      if (itemId === '') continue;
      accountIds.push(record.accountId);
      itemIds.push(itemId);
      responseIds.push(record.id);
    }
  }
  if (itemIds.length === 0) return;
  const parameters = [textArrayLiteral(accountIds), textArrayLiteral(itemIds), textArrayLiteral(responseIds)];
  await transaction.executeQuery(CompiledQuery.raw(insertItemKeysSql, parameters));
}

/** The responses each record continues are kept at least as long as it is. */
async function extendConversations(
  transaction: Transaction<Database>,
  records: readonly ResponseRecord[],
): Promise<void> {
  for (const record of records) {
    if (!record.conversationIds || record.conversationIds.length === 0) continue;
    const parameters = [record.expiresAt, record.accountId, textArrayLiteral(record.conversationIds)];
    await transaction.executeQuery(CompiledQuery.raw(extendExpirySql, parameters));
  }
}

export async function insertResponsesPostgres(db: Kysely<Database>, records: readonly ResponseRecord[]): Promise<void> {
  if (records.length === 0) return;
  await db.transaction().execute(async (transaction) => {
    for (const run of byteRuns(records)) {
      await insertRows(transaction, run);
      await insertItemKeys(transaction, run);
    }
    await extendConversations(transaction, records);
  });
}
