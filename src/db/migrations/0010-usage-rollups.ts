import { type Kysely, sql } from 'kysely';
import { rebuildKeyRollups } from '../repositories/usage-rollups.js';
import type { Database } from '../schema.js';
import { latencyBucketColumns, rollupKeyColumns, rollupTables } from '../usage-rollup-layout.js';
import type { Dialect } from './dialect.js';

/**
 * Usage rollups: `usage_hourly` and `usage_daily`, one row per account, period, key, model, endpoint and provider,
 * with the period's counts, tokens, cost and a latency histogram (db/usage-rollup-layout.ts). The log writers keep
 * them in step with the log in the same transaction as each batch; usage reports read them instead of scanning the
 * log, which at 10M rows took seconds. The primary key leads with the account and the period, so a report is one
 * range read; on SQLite the tables are WITHOUT ROWID, so that range is stored together.
 * Existing log rows are rolled up here, so usage history survives the upgrade (a few seconds per million rows).
 */
export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  for (const table of Object.values(rollupTables)) {
    let create = db.schema
      .createTable(table)
      .addColumn('account_id', 'text', (column) => column.notNull())
      .addColumn('period_start', 'bigint', (column) => column.notNull())
      .addColumn('key_id', 'text', (column) => column.notNull())
      .addColumn('model', 'text', (column) => column.notNull())
      .addColumn('endpoint', 'text', (column) => column.notNull())
      .addColumn('provider', 'text', (column) => column.notNull())
      .addColumn('requests', 'bigint', (column) => column.notNull())
      .addColumn('errors', 'bigint', (column) => column.notNull())
      .addColumn('cancelled', 'bigint', (column) => column.notNull())
      .addColumn('prompt_tokens', 'bigint', (column) => column.notNull())
      .addColumn('completion_tokens', 'bigint', (column) => column.notNull())
      .addColumn('total_tokens', 'bigint', (column) => column.notNull())
      .addColumn('cost_usd', 'double precision', (column) => column.notNull())
      .addColumn('latency_count', 'bigint', (column) => column.notNull())
      .addColumn('latency_sum_ms', 'bigint', (column) => column.notNull());
    for (const column of latencyBucketColumns) {
      create = create.addColumn(column, 'integer', (definition) => definition.notNull().defaultTo(0));
    }
    create = create.addPrimaryKeyConstraint(`${table}_pkey`, [...rollupKeyColumns] as never);
    if (dialect === 'sqlite') create = create.modifyEnd(sql`without rowid`);
    await create.execute();
  }
  // Retention and the operators' overview read by period across accounts.
  await db.schema.createIndex('usage_daily_period').on('usage_daily').column('period_start').execute();
  await rebuildKeyRollups(db as unknown as Kysely<Database>, dialect, { from: 0, to: Number.MAX_SAFE_INTEGER });
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('usage_daily').execute();
  await db.schema.dropTable('usage_hourly').execute();
}
