import type SqliteDatabase from 'better-sqlite3';
import { replaceStreamingRow, responseColumns, responseRowValues } from './response-row.js';
import type { ResponseRecord } from './responses.js';

/**
 * Stored responses on SQLite's server connection, through statements prepared once: a batch of stored responses is
 * one row each (replacing the row that stood for it while it streamed), one key per item and the conversations' expiry,
 * in one transaction. Building and compiling a
 * hundred-row query per batch through the query builder cost more than the inserts (docs/performance.md,
 * "`/v1/responses`").
 */

export type SqliteResponseWriter = (records: readonly ResponseRecord[]) => void;

export function createSqliteResponseWriter(connection: SqliteDatabase.Database): SqliteResponseWriter {
  const insertResponse = connection.prepare<unknown[]>(
    `insert into responses (${responseColumns.join(', ')}) values (${responseColumns.map(() => '?').join(', ')}) ${replaceStreamingRow}`,
  );
  // An item may appear twice in one response (a client reusing an id): its key once.
  const insertItemKey = connection.prepare<unknown[]>(
    'insert or ignore into response_item_ids (account_id, item_id, response_id) values (?, ?, ?)',
  );
  const extendExpiry = connection.prepare<unknown[]>(
    'update responses set expires_at = ? where id = ? and account_id = ? and expires_at < ?',
  );
  return connection.transaction((records: readonly ResponseRecord[]) => {
    for (const record of records) {
      // Not written (its id is stored whole, or was deleted while it streamed): nothing of it is.
      if (insertResponse.run(...responseRowValues(record)).changes === 0) continue;
      for (const itemId of record.itemIds) {
        if (itemId !== '') insertItemKey.run(record.accountId, itemId, record.id);
      }
      for (const id of record.extendedIds ?? []) {
        extendExpiry.run(record.expiresAt, id, record.accountId, record.expiresAt);
      }
    }
  });
}
