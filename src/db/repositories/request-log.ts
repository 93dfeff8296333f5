import type { Insertable, Kysely, Selectable } from 'kysely';
import type { RowBatch } from '../../request-log/row-batch.js';
import type { DatabaseHandle } from '../connect.js';
import type { Database, RequestLogTable } from '../schema.js';
import type { SqliteWorker } from '../sqlite-worker.js';
import { requestLogColumns } from './request-log-columns.js';
import { writeRowBatchPostgres } from './request-log-postgres.js';

export {
  requestLogColumns,
  requestLogLayout,
  requestLogNumberColumns,
  requestLogTextColumns,
} from './request-log-columns.js';

export type RequestLogInsert = Insertable<RequestLogTable>;
export type RequestLogRow = Selectable<RequestLogTable>;

/** One multi-row insert per chunk; the chunk size keeps the statement under every engine's parameter limit. */
export async function insertRequestLogRows(db: Kysely<Database>, rows: readonly RequestLogInsert[]): Promise<void> {
  const rowsPerStatement = 500;
  for (let start = 0; start < rows.length; start += rowsPerStatement) {
    await db
      .insertInto('request_log')
      .values(rows.slice(start, start + rowsPerStatement))
      .execute();
  }
}

/** Writes a batch of rows and moves each key's last-used time forward, in one transaction. */
export type RequestLogBatchWriter = (batch: RowBatch) => Promise<void>;

/** Each key's latest use among the rows (what api_keys.last_used_at is moved forward to). */
export function lastUseOf(rows: readonly RequestLogInsert[]): Map<string, number> {
  const lastUse = new Map<string, number>();
  for (const row of rows) {
    const previous = lastUse.get(row.key_id) ?? 0;
    if (row.created_at > previous) lastUse.set(row.key_id, row.created_at);
  }
  return lastUse;
}

/** Rows as one flat array of their values, in requestLogColumns order (what the prepared INSERTs take). */
export function requestLogValues(rows: readonly RequestLogInsert[]): unknown[] {
  return rows.flatMap((row) => requestLogColumns.map((column) => row[column] ?? null));
}

/**
 * Rows per multi-row INSERT on SQLite. One statement for many rows costs less per row than one statement per row
 * (measured: 7.0 → 5.6 µs per row with the log's indexes), and 50 × 32 parameters stay far below SQLite's limit.
 */
export const sqliteRowsPerInsert = 50;

/** The INSERT for `rows` rows of every column, with positional parameters. */
export function requestLogInsertSql(rows: number): string {
  const row = `(${requestLogColumns.map(() => '?').join(', ')})`;
  return `insert into request_log (${requestLogColumns.join(', ')}) values ${Array(rows).fill(row).join(', ')}`;
}

export const touchLastUsedSql =
  'update api_keys set last_used_at = ? where id = ? and (last_used_at is null or last_used_at < ?)';

/**
 * On SQLite the batch runs through statements prepared once and reused (a fresh multi-row INSERT per batch made
 * SQLite re-prepare a statement with thousands of parameters every time: ~10% of the gateway's CPU under load), on
 * the SQLite worker thread when there is one (db/sqlite-worker.ts: the insert then never stalls the event loop; the
 * batch crosses as it is held, see request-log/row-batch.ts), on this thread otherwise (the worker has died: rare).
 * PostgreSQL takes the batch as one array per column (request-log-postgres.ts).
 */
export function createRequestLogBatchWriter(handle: DatabaseHandle, worker?: SqliteWorker): RequestLogBatchWriter {
  const sqlite = handle.sqlite;
  if (sqlite) {
    const insertOne = sqlite.prepare(requestLogInsertSql(1));
    const insertMany = sqlite.prepare(requestLogInsertSql(sqliteRowsPerInsert));
    const touch = sqlite.prepare(touchLastUsedSql);
    const width = requestLogColumns.length;
    const manyWidth = width * sqliteRowsPerInsert;
    const writeAll = sqlite.transaction((values: readonly unknown[], lastUse: ReadonlyMap<string, number>) => {
      let start = 0;
      for (; start + manyWidth <= values.length; start += manyWidth)
        insertMany.run(values.slice(start, start + manyWidth));
      for (; start < values.length; start += width) insertOne.run(values.slice(start, start + width));
      for (const [keyId, at] of lastUse) touch.run(at, keyId, at);
    });
    return async (batch) => {
      if (worker?.alive) {
        await worker.write(batch.message());
        return;
      }
      const rows = batch.rows();
      writeAll(requestLogValues(rows), lastUseOf(rows));
    };
  }
  // PostgreSQL: one INSERT from column arrays (request-log-postgres.ts).
  return (batch) => writeRowBatchPostgres(handle.db, batch.message());
}

export interface RequestLogCursor {
  createdAt: number;
  id: number;
}

export interface RequestLogQuery {
  accountId: string;
  limit: number;
  /** Keyset pagination: return rows strictly older than this position. */
  before?: RequestLogCursor | undefined;
}

/** Newest first, keyset-paginated on the (account_id, created_at, id) index. */
export async function listRequestLog(db: Kysely<Database>, query: RequestLogQuery): Promise<RequestLogRow[]> {
  let select = db.selectFrom('request_log').selectAll().where('account_id', '=', query.accountId);
  const before = query.before;
  if (before) {
    select = select.where((where) =>
      where.or([
        where('created_at', '<', before.createdAt),
        where.and([where('created_at', '=', before.createdAt), where('id', '<', before.id)]),
      ]),
    );
  }
  return select.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(query.limit).execute();
}

export async function findRequestLogByRequestId(
  db: Kysely<Database>,
  requestId: string,
): Promise<RequestLogRow | undefined> {
  return db.selectFrom('request_log').selectAll().where('request_id', '=', requestId).executeTakeFirst();
}

/** Dollars an account or a key has spent since `since` (for budgets), from the costs logged. */
export async function sumSpend(
  db: Kysely<Database>,
  subject: { accountId: string } | { keyId: string },
  since: number,
): Promise<number> {
  let query = db
    .selectFrom('request_log')
    .select((select) => select.fn.sum<number | string | null>('cost_usd').as('spent'))
    .where('created_at', '>=', since);
  if ('accountId' in subject) {
    query = query.where('account_id', '=', subject.accountId);
  } else {
    // The key's account leads the (account_id, key_id, created_at) index, the one index that finds a key's rows.
    const keyId = subject.keyId;
    query = query
      .where('account_id', '=', (select) =>
        select.selectFrom('api_keys').select('api_keys.account_id').where('api_keys.id', '=', keyId),
      )
      .where('key_id', '=', keyId);
  }
  const row = await query.executeTakeFirst();
  return Number(row?.spent ?? 0);
}
