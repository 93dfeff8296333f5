import { CompiledQuery, type Kysely, type Transaction } from 'kysely';
import { textArrayLiteral } from '../postgres-arrays.js';
import type { Database } from '../schema.js';
import { replaceStreamingRow, responseColumns, responseRowValues } from './response-row.js';
import type { ResponseRecord } from './responses.js';

/**
 * Stored responses on PostgreSQL, a batch in one transaction: the rows in one multi-row insert of plain parameters
 * (replacing the rows that stood for them while they streamed),
 * their items' keys from column arrays (`unnest`, as the request log), then the expiry of the conversations they
 * continue; statements written out here, not built and compiled by the query builder for each batch. The rows' JSON
 * texts are sent as they are: escaped into array literals they cost what compiling saved
 * (docs/performance.md, "`/v1/responses`"). SQLite writes the same rows through prepared statements
 * (responses-sqlite-writer.ts).
 */

/** `insert … values ($1, …, $13), ($14, …)` for `rows` rows, in responseColumns order. */
function insertRowsSql(rows: number): string {
  const tuples: string[] = [];
  for (let row = 0, parameter = 0; row < rows; row++) {
    const placeholders: string[] = [];
    for (let column = 0; column < responseColumns.length; column++) placeholders.push(`$${++parameter}`);
    tuples.push(`(${placeholders.join(', ')})`);
  }
  return `insert into responses (${responseColumns.join(', ')}) values ${tuples.join(', ')} ${replaceStreamingRow} returning id`;
}

// An item may appear twice in one response (a client reusing an id): its key once.
const insertItemKeysSql = `insert into response_item_ids (account_id, item_id, response_id)
  select * from unnest($1::text[], $2::text[], $3::text[]) on conflict do nothing`;

const extendExpirySql =
  'update responses set expires_at = $1 where account_id = $2 and id = any($3::text[]) and expires_at < $1';

/** Rows per insert: 1,300 parameters, far below PostgreSQL's 65,535. */
const rowsPerStatement = 100;
/** Bytes of responses per insert: one message to the server stays far below its 1 GB bound. */
const bytesPerStatement = 16 * 1024 * 1024;

/** The records in runs of at most rowsPerStatement and bytesPerStatement (a larger record alone). */
function statementRuns(records: readonly ResponseRecord[]): ResponseRecord[][] {
  const runs: ResponseRecord[][] = [];
  let run: ResponseRecord[] = [];
  let bytes = 0;
  for (const record of records) {
    if (run.length === rowsPerStatement || (run.length > 0 && bytes + record.storedBytes > bytesPerStatement)) {
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

/** Inserts the rows (replacing those that stood for them while they streamed); the records written. */
async function insertRows(
  transaction: Transaction<Database>,
  records: readonly ResponseRecord[],
): Promise<ResponseRecord[]> {
  const parameters = records.flatMap(responseRowValues);
  const result = await transaction.executeQuery<{ id: string }>(
    CompiledQuery.raw(insertRowsSql(records.length), parameters),
  );
  // Not written (its id is stored whole, or was deleted while it streamed): nothing of it is.
  if (result.rows.length === records.length) return [...records];
  const written = new Set(result.rows.map((row) => row.id));
  return records.filter((record) => written.has(record.id));
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
    if (!record.extendedIds || record.extendedIds.length === 0) continue;
    const parameters = [record.expiresAt, record.accountId, textArrayLiteral(record.extendedIds)];
    await transaction.executeQuery(CompiledQuery.raw(extendExpirySql, parameters));
  }
}

export async function insertResponsesPostgres(db: Kysely<Database>, records: readonly ResponseRecord[]): Promise<void> {
  if (records.length === 0) return;
  await db.transaction().execute(async (transaction) => {
    const written: ResponseRecord[] = [];
    for (const run of statementRuns(records)) {
      const inserted = await insertRows(transaction, run);
      await insertItemKeys(transaction, inserted);
      written.push(...inserted);
    }
    await extendConversations(transaction, written);
  });
}
