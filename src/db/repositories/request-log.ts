import type { Insertable, Kysely, Selectable } from 'kysely';
import type { Database, RequestLogTable } from '../schema.js';

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
