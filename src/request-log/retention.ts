import { type Kysely, sql } from 'kysely';
import type { DatabaseHandle } from '../db/connect.js';
import { deleteExpiredResponses } from '../db/repositories/responses.js';
import { rolledUpAccounts } from '../db/rollup-accounts.js';
import type { Database } from '../db/schema.js';
import { rollupPeriodMs, rollupShapes } from '../db/usage-rollup-layout.js';
import type { Logger } from '../observability/logger.js';

/**
 * Request-log retention that frees disk space and never stalls the gateway:
 * - SQLite: delete old rows in small batches (each a short statement, with a pause between them so requests and
 *   log writes interleave), then `PRAGMA incremental_vacuum` in steps, which hands freed pages back to the file
 *   system (the database is created with auto_vacuum = INCREMENTAL).
 * - PostgreSQL: the log is partitioned by day; partitions entirely older than the cutoff are dropped (their files
 *   are removed at once), the rest of the old rows are deleted in batches, and partitions for the coming days are
 *   created ahead so new rows never land in the default partition.
 */

const dayMs = 86_400_000;
const pauseBetweenBatchesMs = 20;
const vacuumPagesPerStep = 2000;
const partitionsAhead = 7;

export interface RetentionOptions {
  database: DatabaseHandle;
  logger: Logger;
  retentionMs: number;
  intervalMs: number;
  batchSize: number;
  /** Usage rollups whose whole period is older than this are deleted too; 0 or absent keeps them. */
  rollupRetentionMs?: number;
  /** When set, each run also deletes expired stored `/v1/responses` answers, this many per statement. */
  responsesBatchSize?: number;
  /** Awaited between two batches of deletes (a test sends requests there: startup/test-hooks.ts). */
  betweenDeleteBatches?: (() => Promise<void>) | undefined;
}

export interface RetentionResult {
  deletedRows: number;
  deletedRollupRows: number;
  droppedPartitions: number;
  freedPages: number;
}

const pause = () => new Promise((resolve) => setTimeout(resolve, pauseBetweenBatchesMs));

function partitionName(dayStart: number): string {
  return `request_log_p${new Date(dayStart).toISOString().slice(0, 10).replaceAll('-', '')}`;
}

/** Creates the daily partitions from yesterday to `partitionsAhead` days from now (PostgreSQL). */
export async function ensurePartitions(db: Kysely<Database>, now: number, logger?: Logger): Promise<void> {
  const today = Math.floor(now / dayMs) * dayMs;
  for (let day = today - dayMs; day <= today + partitionsAhead * dayMs; day += dayMs) {
    const name = partitionName(day);
    try {
      await sql
        .raw(`create table if not exists ${name} partition of request_log for values from (${day}) to (${day + dayMs})`)
        .execute(db);
    } catch (error) {
      // Rows for that day already sit in the default partition; they stay queryable there and age out with it.
      logger?.warn({ err: error, partition: name }, 'could not create a request-log partition');
    }
  }
}

async function deleteInBatches(
  db: Kysely<Database>,
  table: string,
  cutoff: number,
  batchSize: number,
  dialect: 'sqlite' | 'postgres',
  betweenBatches: (() => Promise<void>) | undefined,
): Promise<number> {
  let deleted = 0;
  for (;;) {
    const statement =
      dialect === 'sqlite'
        ? sql`delete from request_log where id in (select id from request_log where created_at < ${cutoff} limit ${batchSize})`
        : sql`delete from ${sql.table(table)} where ctid in (select ctid from ${sql.table(table)} where created_at < ${cutoff} limit ${batchSize})`;
    const result = await statement.execute(db);
    const count = Number(result.numAffectedRows ?? 0);
    deleted += count;
    if (count < batchSize) return deleted;
    await pause();
    await betweenBatches?.();
  }
}

/**
 * Deletes the rollup rows whose whole period ended before the cutoff, from every rollup, one period at a time from
 * the oldest, so each statement stays short (an hour of rollups is a few thousand rows at most). Rollups per account
 * lead their primary key with the account: their oldest period and its rows are found account by account
 * (rolledUpAccounts), one seek each, where a statement on the period alone read the whole table (on SQLite, on the
 * event loop; docs/performance.md, "The request-log store").
 */
async function deleteOldRollups(db: Kysely<Database>, cutoff: number): Promise<number> {
  let deleted = 0;
  for (const shape of rollupShapes) {
    const byAccount = shape.keyColumns[0] === 'account_id';
    for (const period of ['hour', 'day'] as const) {
      const table = sql.table(shape.tables[period]);
      const accounts = rolledUpAccounts(shape.tables[period]);
      const size = rollupPeriodMs[period];
      for (;;) {
        const oldest = byAccount
          ? await sql<{ oldest: number | string | null }>`select min((select min(period_start) from ${table}
              where account_id = accounts.id)) as oldest from ${accounts} as accounts`.execute(db)
          : await sql<{ oldest: number | string | null }>`select min(period_start) as oldest from ${table}`.execute(db);
        const first = oldest.rows[0]?.oldest;
        if (first === null || first === undefined) break;
        const before = Math.min(Number(first) + size, cutoff - size + 1);
        if (before <= Number(first)) break;
        const result = byAccount
          ? await sql`delete from ${table} where account_id in ${accounts} and period_start < ${before}`.execute(db)
          : await sql`delete from ${table} where period_start < ${before}`.execute(db);
        deleted += Number(result.numAffectedRows ?? 0);
        await pause();
      }
    }
  }
  return deleted;
}

export async function applyRetention(
  options: Omit<RetentionOptions, 'intervalMs'>,
  now = Date.now(),
): Promise<RetentionResult> {
  const { database, retentionMs, batchSize } = options;
  const result: RetentionResult = { deletedRows: 0, deletedRollupRows: 0, droppedPartitions: 0, freedPages: 0 };
  const db = database.db;
  if (database.dialect === 'postgres') await ensurePartitions(db, now, options.logger);
  if ((options.rollupRetentionMs ?? 0) > 0) {
    result.deletedRollupRows = await deleteOldRollups(db, now - (options.rollupRetentionMs ?? 0));
  }
  if (retentionMs <= 0) return result;
  const cutoff = now - retentionMs;
  const deleteOld = (table: string, dialect: 'sqlite' | 'postgres') =>
    deleteInBatches(db, table, cutoff, batchSize, dialect, options.betweenDeleteBatches);

  if (database.dialect === 'postgres') {
    const partitions = await sql<{ name: string }>`
      select child.relname as name
      from pg_inherits
      join pg_class parent on parent.oid = pg_inherits.inhparent
      join pg_class child on child.oid = pg_inherits.inhrelid
      where parent.relname = 'request_log' and child.relname like 'request_log_p%'`.execute(db);
    for (const { name } of partitions.rows) {
      const match = /^request_log_p(\d{4})(\d{2})(\d{2})$/.exec(name);
      if (!match) continue;
      const dayEnd = Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])) + dayMs;
      if (dayEnd <= cutoff) {
        await sql.raw(`drop table ${name}`).execute(db);
        result.droppedPartitions++;
      } else if (dayEnd - dayMs < cutoff) {
        result.deletedRows += await deleteOld(name, 'postgres');
      }
    }
    result.deletedRows += await deleteOld('request_log_default', 'postgres');
    return result;
  }

  result.deletedRows = await deleteOld('request_log', 'sqlite');
  const sqlite = database.sqlite;
  if (sqlite && result.deletedRows > 0) {
    for (;;) {
      const free = Number(sqlite.pragma('freelist_count', { simple: true }));
      if (free === 0) break;
      sqlite.pragma(`incremental_vacuum(${Math.min(free, vacuumPagesPerStep)})`);
      result.freedPages += Math.min(free, vacuumPagesPerStep);
      await pause();
    }
  }
  return result;
}

/** Runs retention shortly after start-up and then every interval; one run at a time. */
export class RetentionJob {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(private readonly options: RetentionOptions) {}

  start(): void {
    const run = () => {
      this.running ??= this.runOnce().finally(() => {
        this.running = undefined;
      });
    };
    this.timer = setInterval(run, this.options.intervalMs);
    this.timer.unref();
    setTimeout(run, 5_000).unref();
  }

  private async runOnce(): Promise<void> {
    try {
      const result = await applyRetention(this.options);
      if (result.deletedRows > 0 || result.droppedPartitions > 0 || result.deletedRollupRows > 0) {
        this.options.logger.info(result, 'request-log retention removed old rows');
      } else {
        // Seen with logging.level debug: that the job runs on its schedule even when it has nothing to remove, and
        // in which process (with `serve --workers`, one worker runs it).
        this.options.logger.debug({ ...result, pid: process.pid }, 'request-log retention ran');
      }
    } catch (error) {
      this.options.logger.warn({ err: error }, 'request-log retention failed; it runs again at the next interval');
    }
    const responsesBatchSize = this.options.responsesBatchSize;
    if (responsesBatchSize === undefined) return;
    try {
      // Each stored response carries its own expiry (responses.retention), so the sweep needs only the time.
      const deleted = await deleteExpiredResponses(this.options.database.db, Date.now(), responsesBatchSize);
      if (deleted > 0) this.options.logger.info({ deletedResponses: deleted }, 'expired stored responses deleted');
    } catch (error) {
      this.options.logger.warn({ err: error }, 'deleting expired responses failed; it runs again at the next interval');
    }
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }
}
