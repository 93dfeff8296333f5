import type SqliteDatabase from 'better-sqlite3';
import type { CompiledQuery } from 'kysely';
import type pg from 'pg';

/**
 * Runs a compiled read and returns its rows as arrays of values in select order. For wide results (the usage
 * reports' 42 columns) both drivers build an array per row several times faster than an object of named properties
 * (docs/performance.md); Kysely offers only objects.
 */
export type ArrayReader = (query: CompiledQuery) => Promise<unknown[][]>;

export function sqliteArrayReader(sqlite: SqliteDatabase.Database): ArrayReader {
  return async (query) =>
    sqlite
      .prepare(query.sql)
      .raw(true)
      .all(...query.parameters) as unknown[][];
}

export function postgresArrayReader(pool: pg.Pool): ArrayReader {
  return async (query) => {
    const result = await pool.query({ text: query.sql, values: [...query.parameters], rowMode: 'array' });
    return result.rows as unknown[][];
  };
}
