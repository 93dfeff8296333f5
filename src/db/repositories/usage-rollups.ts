import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../migrations/dialect.js';
import type { Database } from '../schema.js';
import {
  inferenceEndpoints,
  keyRollup,
  latencyBucketBounds,
  latencyBucketColumns,
  type RollupPeriod,
  type RollupShape,
  rollupKeyColumns,
  rollupPeriodMs,
  rollupShapes,
  rollupSumColumns,
} from '../usage-rollup-layout.js';

/**
 * Writing the usage rollups: the upsert the log writers run for each batch (in the batch's transaction), and the
 * rebuild from the log's rows (`switchboard usage rebuild-rollups`, and migration 0010 for rows logged before it).
 * Both compute the same thing: a key rollup row is the sum over the log rows of its account, period, key, model,
 * endpoint and provider, and a narrower rollup's row the sum of the key rollup's rows it keeps apart from no others.
 */

const sqlList = (items: readonly string[]) => items.map((item) => `'${item}'`).join(', ');

/** Whether a log row counts in latency figures (SQL over request_log; see inferenceEndpoints). */
const timedExpression = `case when outcome = 'success' and (endpoint in (${sqlList(inferenceEndpoints)}) or (endpoint is null and model <> '')) then 1 else 0 end`;

/** The histogram bucket of a timed row's latency, -1 for the others. */
const bucketExpression = `case when timed = 0 then -1 ${latencyBucketBounds
  .map((bound, index) => `when latency_ms <= ${bound} then ${index}`)
  .join(' ')} else ${latencyBucketBounds.length} end`;

const keyList = rollupKeyColumns.join(', ');
const sumList = rollupSumColumns.join(', ');

/** INSERT … SELECT that rolls up the log rows of [from, to) into hourly rows (from and to whole hours). */
function hourlyFromLogSql(from: number, to: number) {
  const hour = rollupPeriodMs.hour;
  const histogram = latencyBucketColumns
    .map((column, index) => `sum(case when bucket = ${index} then 1 else 0 end) as ${column}`)
    .join(', ');
  return sql.raw(`insert into usage_hourly (${keyList}, ${sumList})
    select account_id, period_start, key_id, model, endpoint, provider,
      count(*), sum(case when outcome = 'error' then 1 else 0 end), sum(case when outcome = 'cancelled' then 1 else 0 end),
      coalesce(sum(prompt_tokens), 0), coalesce(sum(completion_tokens), 0), coalesce(sum(total_tokens), 0),
      coalesce(sum(cost_usd), 0), sum(timed), sum(case when timed = 1 then latency_ms else 0 end), ${histogram}
    from (
      select account_id, (created_at / ${hour}) * ${hour} as period_start, key_id, model,
        coalesce(endpoint, '') as endpoint, coalesce(provider, '') as provider, outcome, prompt_tokens,
        completion_tokens, total_tokens, cost_usd, latency_ms, timed, ${bucketExpression} as bucket
      from (select request_log.*, ${timedExpression} as timed from request_log
        where created_at >= ${from} and created_at < ${to}) as timed_rows
    ) as bucketed
    group by account_id, period_start, key_id, model, endpoint, provider`);
}

/** INSERT … SELECT that sums the hourly rows of [from, to) into daily rows (from and to whole days, UTC). */
function dailyFromHourlySql(from: number, to: number) {
  const day = rollupPeriodMs.day;
  const sums = rollupSumColumns.map((column) => `sum(${column})`).join(', ');
  return sql.raw(`insert into usage_daily (${keyList}, ${sumList})
    select account_id, (period_start / ${day}) * ${day} as day_start, key_id, model, endpoint, provider, ${sums}
    from usage_hourly where period_start >= ${from} and period_start < ${to}
    group by account_id, day_start, key_id, model, endpoint, provider`);
}

export interface RebuildRange {
  /** Inclusive, ms; widened down to a whole hour. */
  from: number;
  /** Exclusive, ms; widened up to a whole hour. */
  to: number;
}

export interface RebuildResult {
  from: number;
  to: number;
  hourlyRows: number;
  dailyRows: number;
}

/**
 * INSERT … SELECT that sums the key rollup's rows of [from, to) (of `period`) into the narrower rollup `shape`: its
 * rows are those sums by construction, whatever the key rollup holds (rows older than the log's included).
 */
export function narrowerFromKeyRollupSql(shape: RollupShape, period: RollupPeriod, from: number, to: number) {
  const keys = shape.keyColumns.join(', ');
  const sums = rollupSumColumns.map((column) => `sum(${column})`).join(', ');
  return sql.raw(`insert into ${shape.tables[period]} (${keys}, ${sumList})
    select ${keys}, ${sums} from ${keyRollup.tables[period]}
    where period_start >= ${from} and period_start < ${to}
    group by ${keys}`);
}

/** Recomputes the narrower rollups of [from, to) (whole days) from the key rollup: a rebuild's last step. */
export async function rebuildNarrowerRollups(db: Kysely<Database>, from: number, to: number): Promise<void> {
  for (const shape of rollupShapes) {
    if (shape === keyRollup) continue;
    for (const period of ['hour', 'day'] as const) {
      await sql`delete from ${sql.table(shape.tables[period])} where period_start >= ${from} and period_start < ${to}`.execute(
        db,
      );
      await narrowerFromKeyRollupSql(shape, period, from, to).execute(db);
    }
  }
}

/**
 * Recomputes the key rollup of a range from the log: hourly rows of its hours from the log's rows, then daily rows
 * of every day it touches from the hourly rows (migration 0010; rebuildUsageRollups does every rollup).
 */
export async function rebuildKeyRollups(
  db: Kysely<Database>,
  dialect: Dialect,
  range: RebuildRange,
): Promise<RebuildResult> {
  return rebuild(db, dialect, range, false);
}

/**
 * Recomputes every rollup of a range: the key rollup from the log (rebuildKeyRollups), then the narrower ones of
 * every day the range touches from it. Run it inside a transaction (the caller's): on PostgreSQL the rollup tables
 * are locked first, so a log batch committed meanwhile adds its rows after the rebuild instead of being lost.
 */
export async function rebuildUsageRollups(
  db: Kysely<Database>,
  dialect: Dialect,
  range: RebuildRange,
): Promise<RebuildResult> {
  return rebuild(db, dialect, range, true);
}

async function rebuild(
  db: Kysely<Database>,
  dialect: Dialect,
  range: RebuildRange,
  narrower: boolean,
): Promise<RebuildResult> {
  const hour = rollupPeriodMs.hour;
  const day = rollupPeriodMs.day;
  // Clamped so the literals stay exact integers on both engines.
  const from = Math.max(0, Math.floor(range.from / hour) * hour);
  const to = Math.min(8_640_000_000_000_000, Math.ceil(range.to / hour) * hour);
  const dayFrom = Math.floor(from / day) * day;
  const dayTo = Math.min(8_640_000_000_000_000, Math.ceil(to / day) * day);
  if (dialect === 'postgres') {
    const shapes = narrower ? rollupShapes : [keyRollup];
    const tables = shapes.flatMap((shape) => [shape.tables.hour, shape.tables.day]);
    await sql.raw(`lock table ${tables.join(', ')} in exclusive mode`).execute(db);
  }
  await sql`delete from usage_hourly where period_start >= ${from} and period_start < ${to}`.execute(db);
  const hourly = await hourlyFromLogSql(from, to).execute(db);
  await sql`delete from usage_daily where period_start >= ${dayFrom} and period_start < ${dayTo}`.execute(db);
  const daily = await dailyFromHourlySql(dayFrom, dayTo).execute(db);
  // Whole days for both periods: a day's narrower rows are summed from all of its key rows, rebuilt or not.
  if (narrower) await rebuildNarrowerRollups(db, dayFrom, dayTo);
  return {
    from,
    to,
    hourlyRows: Number(hourly.numAffectedRows ?? 0),
    dailyRows: Number(daily.numAffectedRows ?? 0),
  };
}

/**
 * The upsert of `rows` rollup rows into `table`, with `?` placeholders: key columns (`keyColumns`, the key rollup's by
 * default) then sum columns, per row. A row already there gets the new sums added (ON CONFLICT … DO UPDATE, which
 * SQLite and PostgreSQL spell alike).
 */
export function rollupUpsertSql(table: string, rows: number, keyColumns: readonly string[] = rollupKeyColumns): string {
  const columns = [...keyColumns, ...rollupSumColumns];
  const row = `(${columns.map(() => '?').join(', ')})`;
  const updates = rollupSumColumns.map((column) => `${column} = ${table}.${column} + excluded.${column}`).join(', ');
  return `insert into ${table} (${columns.join(', ')}) values ${Array(rows).fill(row).join(', ')} on conflict (${keyColumns.join(', ')}) do update set ${updates}`;
}
