import type SqliteDatabase from 'better-sqlite3';
import { rollupUpsertSql } from '../db/repositories/usage-rollups.js';
import { cellValue, lastUseByKey, type RowBatchMessage } from './row-batch.js';
import { accountIdPlace, keyIdPlace, requestLogColumns, textColumnCount } from './row-layout.js';
import { hourlyRollup, rollupParameterCount, rollupParameters, rollupRowsFor, rollupTargets } from './usage-rollup.js';

/**
 * A request-log batch on SQLite, in one transaction: the rows grouped by account, inserted through statements
 * prepared once (`rowsPerInsert` rows per statement, the remainder one by one), then each key's last use moved
 * forward, and the usage rollups (usage-rollup.ts) moved with them. The SQLite thread (sqlite-worker-thread.ts) writes with it on its own connection, and the main thread on
 * the server's connection when that thread has died. Why each choice: docs/performance.md#the-request-log-store.
 */

/** Rows per multi-row INSERT: cheaper per row than one statement per row, and far below SQLite's parameter limit. */
export const rowsPerInsert = 50;

const columnCount = requestLogColumns.length;
// Read for every row sorted: a module's own bindings are cheaper to read than imported ones.
const textWidth = textColumnCount;

function insertSql(rows: number): string {
  const row = `(${requestLogColumns.map(() => '?').join(', ')})`;
  return `insert into request_log (${requestLogColumns.join(', ')}) values ${Array(rows).fill(row).join(', ')}`;
}

const touchLastUsedSql =
  'update api_keys set last_used_at = ? where id = ? and (last_used_at is null or last_used_at < ?)';

/** Writes a batch: inserts its rows, moves its keys' last-used times and adds it to the rollups, in one transaction. */
export type SqliteBatchWriter = (batch: RowBatchMessage) => void;

export function createSqliteBatchWriter(connection: SqliteDatabase.Database): SqliteBatchWriter {
  const insertOne = connection.prepare<unknown[]>(insertSql(1));
  const insertMany = connection.prepare<unknown[]>(insertSql(rowsPerInsert));
  const touch = connection.prepare<unknown[]>(touchLastUsedSql);
  const upserts = rollupTargets.map((target) => ({
    target,
    statement: connection.prepare<unknown[]>(rollupUpsertSql(target.table, 1, target.shape.keyColumns)),
    arguments: new Array(rollupParameterCount(target.shape)).fill(null) as unknown[],
  }));
  // The statements' arguments, reused from batch to batch and passed spread: better-sqlite3 then binds each argument
  // directly instead of reading an array's elements one by one.
  const manyArguments: unknown[] = new Array(columnCount * rowsPerInsert).fill(null);
  const oneArguments: unknown[] = new Array(columnCount).fill(null);
  return connection.transaction((batch: RowBatchMessage) => {
    const order = insertionOrder(batch);
    let first = 0;
    for (; first + rowsPerInsert <= batch.count; first += rowsPerInsert) {
      fill(manyArguments, batch, order, first, rowsPerInsert);
      insertMany.run(...manyArguments);
    }
    for (; first < batch.count; first++) {
      fill(oneArguments, batch, order, first, 1);
      insertOne.run(...oneArguments);
    }
    for (const [keyId, at] of lastUseByKey(batch)) touch.run(at, keyId, at);
    const hourly = hourlyRollup(batch);
    for (const upsert of upserts) {
      for (const row of rollupRowsFor(hourly, upsert.target)) {
        rollupParameters(row, upsert.arguments, 0, upsert.target.shape);
        upsert.statement.run(...upsert.arguments);
      }
    }
  });
}

/** Fills `target` with the rows order[first .. first + count - 1] of the batch, in requestLogColumns order. */
function fill(target: unknown[], batch: RowBatchMessage, order: Int32Array, first: number, count: number): void {
  let at = 0;
  for (let position = first; position < first + count; position++) {
    const row = order[position] as number;
    for (let column = 0; column < columnCount; column++) target[at++] = cellValue(batch, row, column);
  }
}

/**
 * The batch's rows grouped by account, and by key within an account, each group in arrival order. Four of the log's
 * indexes start with the account: rows inserted account by account touch each account's index pages once per batch
 * instead of once per row. Rows of an account keep their order, so the log's ids still grow with arrival within it.
 */
export function insertionOrder(batch: RowBatchMessage): Int32Array {
  const { count, texts } = batch;
  const identity = new Int32Array(count);
  let oneAccount = true;
  for (let row = 0; row < count; row++) {
    identity[row] = row;
    if (texts[row * textWidth + accountIdPlace] !== texts[accountIdPlace]) oneAccount = false;
  }
  if (oneAccount) return identity;
  // Two stable counting sorts (a text's index in the batch's strings stands for the text): by key, then by account.
  const byKey = countingSort(identity, texts, keyIdPlace, batch.strings.length);
  return countingSort(byKey, texts, accountIdPlace, batch.strings.length);
}

/** `rows` stably sorted by their text index at `place` (-1, absent, first); `distinct` bounds the indexes. */
function countingSort(rows: Int32Array, texts: Int32Array, place: number, distinct: number): Int32Array {
  // starts[slot + 1] counts the rows of each slot (the text index + 1), then becomes where each slot's rows start.
  const starts = new Int32Array(distinct + 2);
  const slotOf = (row: number) => (texts[row * textWidth + place] as number) + 1;
  for (const row of rows) {
    const next = slotOf(row) + 1;
    starts[next] = (starts[next] as number) + 1;
  }
  for (let slot = 1; slot < starts.length; slot++)
    starts[slot] = (starts[slot] as number) + (starts[slot - 1] as number);
  const sorted = new Int32Array(rows.length);
  for (const row of rows) {
    const slot = slotOf(row);
    const at = starts[slot] as number;
    sorted[at] = row;
    starts[slot] = at + 1;
  }
  return sorted;
}
