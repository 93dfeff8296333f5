import { accessSync, chmodSync, constants, existsSync, statfsSync } from 'node:fs';
import path from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, type Migration, Migrator, PostgresDialect, SqliteDialect, sql } from 'kysely';
import type pg from 'pg';
import { DirectoryError, ensureDirectory, userDescription } from '../config/data-directory.js';
import type { Config } from '../config/schema.js';
import { packageVersion } from '../package-files.js';
import { type ArrayReader, postgresArrayReader, sqliteArrayReader } from './array-reader.js';
import type { Dialect } from './migrations/dialect.js';
import { migrations } from './migrations/index.js';
import type { Database } from './schema.js';

export interface DatabaseHandle {
  db: Kysely<Database>;
  dialect: Dialect;
  /** The embedded SQLite connection, for the few hot writes that use cached prepared statements directly. */
  sqlite?: SqliteDatabase.Database;
  /** Reads rows as arrays rather than objects, for wide results (array-reader.ts). */
  readArrays: ArrayReader;
  /** Where the data lives, for messages (never contains a password). */
  location: string;
  close(): Promise<void>;
}

function openSqlite(config: Config): DatabaseHandle {
  const file = path.resolve(config.server.dataDir, config.database.sqlitePath);
  const directory = path.dirname(file);
  // SQLite writes its -wal and -shm files beside the database, so the directory must be writable even to read.
  ensureDirectory(directory, directory === config.server.dataDir ? 'the data directory' : "the database's directory", {
    writable: true,
  });
  const sqlite = new SqliteDatabase(file);
  // Key hashes and request logs are nobody else's business; SQLite gives its -wal/-shm files the same mode.
  chmodSync(file, 0o600);
  // First: the CLI and the server write the same file, and two processes starting on a fresh file both switch it to
  // WAL below; each waits for the other's locks instead of failing.
  sqlite.pragma('busy_timeout = 5000');
  // Incremental auto-vacuum only takes effect on a database with no tables yet, so it is set before migrations:
  // request-log retention can then hand freed pages back to the file system.
  sqlite.pragma('auto_vacuum = INCREMENTAL');
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('foreign_keys = ON');
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
  return {
    db,
    dialect: 'sqlite',
    sqlite,
    readArrays: sqliteArrayReader(sqlite),
    location: file,
    close: async () => {
      await db.destroy();
    },
  };
}

/** postgres://user:secret@host/db -> postgres://user@host/db, for log lines and messages. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.password = '';
    return parsed.toString();
  } catch {
    return 'postgres://(unparseable url)';
  }
}

async function openPostgres(config: Config, url: string): Promise<DatabaseHandle> {
  // Loaded only when PostgreSQL is configured: a single SQLite node does not pay for the driver's memory.
  const { default: postgres } = await import('pg');
  const pool = new postgres.Pool({
    connectionString: url,
    max: config.database.poolSize,
    connectionTimeoutMillis: 5000,
    idleTimeoutMillis: 30_000,
    // An idle connection never keeps the process alive: the gateway's listening socket does that, and a command
    // or test that has finished exits at once instead of 30 s later.
    allowExitOnIdle: true,
    // Times are epoch milliseconds and ids are far below 2^53, so int8 columns are read as numbers (pg's default
    // is strings). Set per pool, not on pg's global type registry.
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === 20
          ? (value: string) => Number(value)
          : postgres.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  // A connection dropped while idle (server restart, network blip) must not crash the process; the pool reconnects.
  pool.on('error', () => {});
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return {
    db,
    dialect: 'postgres',
    readArrays: postgresArrayReader(pool),
    location: redactUrl(url),
    close: async () => {
      await db.destroy();
    },
  };
}

export interface MigrationOptions {
  /** Runs after each migration, inside its transaction (a test's pause: startup/test-migration-pause.ts). */
  afterEachMigration?: (() => Promise<void>) | undefined;
}

/** The migrator over every migration of this build, for the handle's dialect (tests also migrate down with it). */
export function migratorFor(handle: DatabaseHandle, options: MigrationOptions = {}): Migrator {
  return new Migrator({
    db: handle.db,
    // Migrations are developed on branches and numbered by feature; each is independent of the others.
    allowUnorderedMigrations: true,
    provider: {
      getMigrations: async () => {
        const result: Record<string, Migration> = {};
        for (const [name, migration] of Object.entries(migrations)) {
          result[name] = {
            up: async (db) => {
              await migration.up(db, handle.dialect);
              await options.afterEachMigration?.();
            },
            down: (db) => migration.down(db, handle.dialect),
          };
        }
        return result;
      },
    },
  });
}

/** How long a process waits for another one's SQLite migrations (0014 rewrites every stored response). */
const sqliteMigrationWaitMs = 120_000;

export async function migrateToLatest(handle: DatabaseHandle, options: MigrationOptions = {}): Promise<void> {
  const migrator = migratorFor(handle, options);
  const sqlite = handle.sqlite;
  if (sqlite && (await migrator.getMigrations()).some((migration) => migration.executedAt === undefined)) {
    // Kysely takes no lock on SQLite, so two processes starting on a fresh database (two servers, a server and the
    // CLI) both ran 0001 and the second failed ("table accounts already exists"). An immediate transaction is that
    // lock: the second waits, then finds nothing left to do. It also makes a failed migration leave nothing behind.
    sqlite.pragma(`busy_timeout = ${sqliteMigrationWaitMs}`);
    try {
      sqlite.exec('begin immediate');
    } finally {
      sqlite.pragma('busy_timeout = 5000');
    }
    try {
      await runMigrations(migrator);
      sqlite.exec('commit');
    } catch (error) {
      if (sqlite.inTransaction) sqlite.exec('rollback');
      throw error;
    }
    return;
  }
  await runMigrations(migrator);
}

async function runMigrations(migrator: Migrator): Promise<void> {
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((result) => result.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(`database migration ${failed} failed: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/**
 * A database a newer Switchboard has migrated holds migrations this build does not know; Kysely calls that
 * "corrupted", which sends an operator after a backup for nothing. Said plainly before migrating.
 */
async function refuseNewerSchema(handle: DatabaseHandle): Promise<void> {
  const tables = await handle.db.introspection.getTables({ withInternalKyselyTables: true });
  if (!tables.some((table) => table.name === 'kysely_migration')) return;
  const { rows } = await sql<{ name: string }>`select name from kysely_migration`.execute(handle.db);
  const unknown = rows.map((row) => row.name).filter((name) => !Object.hasOwn(migrations, name));
  if (unknown.length === 0) return;
  throw new Error(
    `it was written by a newer version of Switchboard (schema migration ${unknown.sort().join(', ')} is unknown to ` +
      `version ${packageVersion()}); run that version or a later one, or restore a backup taken before the upgrade`,
  );
}

/** Bytes this user may still write on the file system of `directory`, or undefined when that cannot be told. */
function freeBytes(directory: string): number | undefined {
  try {
    const stats = statfsSync(directory);
    return stats.bavail * stats.bsize;
  } catch {
    return undefined;
  }
}

/** SQLite's own words for the two failures an operator meets most, with what they mean here. */
function explainSqliteError(error: unknown, file?: string): string {
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : String(error);
  if (code === 'SQLITE_NOTADB') return 'the file is not a SQLite database (or its header is damaged)';
  if (code === 'SQLITE_BUSY') return `${message}: another process has held a write transaction for over 5 s`;
  if (typeof code === 'string' && (code === 'SQLITE_FULL' || code.startsWith('SQLITE_IOERR')) && file) {
    const space = freeBytes(path.dirname(file));
    if (space !== undefined && space < 1024 * 1024) return `${message}: the disk is full (${space} bytes free)`;
  }
  if ((code === 'SQLITE_CANTOPEN' || code === 'SQLITE_READONLY' || code === 'EPERM') && file && existsSync(file)) {
    try {
      accessSync(file, constants.R_OK | constants.W_OK);
    } catch {
      return `${userDescription()} may not read and write the file (is it run as the user who created it?)`;
    }
  }
  return message;
}

function openSqliteExplained(config: Config): DatabaseHandle {
  try {
    return openSqlite(config);
  } catch (error) {
    if (error instanceof DirectoryError) throw error;
    const file = path.resolve(config.server.dataDir, config.database.sqlitePath);
    throw new Error(`cannot use the SQLite database at ${file}: ${explainSqliteError(error, file)}`);
  }
}

/** Opens the configured database (PostgreSQL when database.url is set, else SQLite) and migrates it. */
export async function openDatabase(config: Config, options: MigrationOptions = {}): Promise<DatabaseHandle> {
  const handle = config.database.url ? await openPostgres(config, config.database.url) : openSqliteExplained(config);
  try {
    await refuseNewerSchema(handle);
    await migrateToLatest(handle, options);
  } catch (error) {
    await handle.close();
    const engine = handle.dialect === 'postgres' ? 'PostgreSQL' : 'SQLite';
    const file = handle.dialect === 'sqlite' ? handle.location : undefined;
    throw new Error(`cannot use the ${engine} database at ${handle.location}: ${explainSqliteError(error, file)}`);
  }
  return handle;
}
