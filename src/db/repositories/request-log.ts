import type { Insertable, Kysely, Selectable } from 'kysely';
import type { DatabaseHandle } from '../connect.js';
import type { Database, RequestLogTable } from '../schema.js';
import type { SqliteWorker } from '../sqlite-worker.js';
import { touchLastUsed } from './api-keys.js';

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

/** Every column a row may set, in one fixed order (the prepared statement's parameters). */
export const requestLogColumns = [
  'request_id',
  'created_at',
  'account_id',
  'key_id',
  'key_name',
  'model',
  'provider',
  'upstream_model',
  'status',
  'outcome',
  'error_type',
  'error_code',
  'error_message',
  'stream',
  'latency_ms',
  'ttft_ms',
  'prompt_tokens',
  'completion_tokens',
  'cached_tokens',
  'reasoning_tokens',
  'total_tokens',
  'usage_estimated',
  'cost_usd',
  'user_agent',
  'request_body',
  'response_body',
  'served_model',
  'deployment',
  'attempt_count',
  'attempts',
  'cache_write_tokens',
] as const satisfies ReadonlyArray<keyof RequestLogInsert>;

/** Writes a batch of rows and moves each key's last-used time forward, in one transaction. */
export type RequestLogBatchWriter = (
  rows: readonly RequestLogInsert[],
  lastUse: ReadonlyMap<string, number>,
) => Promise<void>;

/** Nulls, as many as the largest batch so far needed; sliced, it gives a packed array of any length up to that. */
const nullTemplate: null[] = [];

function packedNulls(length: number): unknown[] {
  while (nullTemplate.length < length) nullTemplate.push(null);
  return nullTemplate.slice(0, length);
}

/**
 * Rows as one flat array of their values, in requestLogColumns order (what the prepared INSERTs take). Spelled out
 * column by column rather than looked up by name in a loop: this runs for every request, and fixed property reads
 * are several times cheaper (a unit test checks the order against requestLogColumns).
 */
export function requestLogValues(rows: readonly RequestLogInsert[]): unknown[] {
  // A packed array of the right length, cut from a template of nulls. Not new Array(n): a preallocated array is
  // "holey" to V8 for good, and postMessage clones a holey array key by key (index strings collected, each looked up)
  // instead of element by element; for a batch of 500 rows that was 3.5x the serialize and 3x the deserialize time
  // (measured with v8.serialize), paid on the event loop and on the SQLite thread: ~10 µs of CPU per logged request.
  // Not appended to from empty either: growing it copied it over and over (~0.6 µs and ~0.8 KB of garbage per row,
  // against ~0.1 µs for the copy of the template).
  const values = packedNulls(rows.length * requestLogColumns.length);
  let at = 0;
  for (const row of rows) {
    values[at++] = row.request_id;
    values[at++] = row.created_at;
    values[at++] = row.account_id;
    values[at++] = row.key_id;
    values[at++] = row.key_name;
    values[at++] = row.model;
    values[at++] = row.provider ?? null;
    values[at++] = row.upstream_model ?? null;
    values[at++] = row.status;
    values[at++] = row.outcome;
    values[at++] = row.error_type ?? null;
    values[at++] = row.error_code ?? null;
    values[at++] = row.error_message ?? null;
    values[at++] = row.stream;
    values[at++] = row.latency_ms;
    values[at++] = row.ttft_ms ?? null;
    values[at++] = row.prompt_tokens ?? null;
    values[at++] = row.completion_tokens ?? null;
    values[at++] = row.cached_tokens ?? null;
    values[at++] = row.reasoning_tokens ?? null;
    values[at++] = row.total_tokens ?? null;
    values[at++] = row.usage_estimated ?? 0;
    values[at++] = row.cost_usd ?? null;
    values[at++] = row.user_agent ?? null;
    values[at++] = row.request_body ?? null;
    values[at++] = row.response_body ?? null;
    values[at++] = row.served_model ?? null;
    values[at++] = row.deployment ?? null;
    values[at++] = row.attempt_count ?? null;
    values[at++] = row.attempts ?? null;
    values[at++] = row.cache_write_tokens ?? null;
  }
  return values;
}

/**
 * Rows per multi-row INSERT on SQLite. One statement for many rows costs less per row than one statement per row
 * (measured: 7.0 → 5.6 µs per row with the log's indexes), and 50 × 31 parameters stay far below SQLite's limit.
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
 * the SQLite worker thread when there is one (db/sqlite-worker.ts: the insert then never stalls the event loop), on
 * this thread otherwise. Other engines use the Kysely multi-row insert.
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
    return async (rows, lastUse) => {
      const values = requestLogValues(rows);
      if (worker?.alive) await worker.write(values, lastUse);
      else writeAll(values, lastUse);
    };
  }
  return async (rows, lastUse) => {
    await handle.db.transaction().execute(async (transaction) => {
      await insertRequestLogRows(transaction, rows);
      for (const [keyId, at] of lastUse) await touchLastUsed(transaction, keyId, at);
    });
  };
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
