import { type Kysely, sql } from 'kysely';
import { narrowerFromKeyRollupSql } from '../repositories/usage-rollups.js';
import type { Database } from '../schema.js';
import { keyRollup, latencyBucketColumns, type RollupShape, rollupShapes } from '../usage-rollup-layout.js';
import type { Dialect } from './dialect.js';

/**
 * Narrower usage rollups beside usage_hourly and usage_daily (usage-rollup-layout.ts): across accounts per model,
 * endpoint and provider (`usage_global_*`), per account alone (`usage_account_*`) and per account without the key
 * (`usage_model_*`). A report reads the narrowest one that keeps what it filters and groups by: at 10M log rows an
 * hourly report per model read 37k key rollup rows, the operator's reports every account's. Filled here from the
 * key rollup, rolled-up history older than the log's rows included.
 */

const narrower = (): RollupShape[] => rollupShapes.filter((shape) => shape !== keyRollup);

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  for (const shape of narrower()) {
    for (const period of ['hour', 'day'] as const) {
      const table = shape.tables[period];
      let create = db.schema.createTable(table);
      for (const column of shape.keyColumns) {
        create = create.addColumn(column, column === 'period_start' ? 'bigint' : 'text', (definition) =>
          definition.notNull(),
        );
      }
      for (const column of ['requests', 'errors', 'cancelled', 'prompt_tokens', 'completion_tokens', 'total_tokens'])
        create = create.addColumn(column, 'bigint', (definition) => definition.notNull());
      create = create
        .addColumn('cost_usd', 'double precision', (definition) => definition.notNull())
        .addColumn('latency_count', 'bigint', (definition) => definition.notNull())
        .addColumn('latency_sum_ms', 'bigint', (definition) => definition.notNull());
      for (const column of latencyBucketColumns)
        create = create.addColumn(column, 'integer', (definition) => definition.notNull().defaultTo(0));
      create = create.addPrimaryKeyConstraint(`${table}_pkey`, [...shape.keyColumns] as never);
      if (dialect === 'sqlite') create = create.modifyEnd(sql`without rowid`);
      await create.execute();
      await narrowerFromKeyRollupSql(shape, period, 0, Number.MAX_SAFE_INTEGER).execute(db as Kysely<Database>);
    }
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const shape of narrower().reverse()) {
    await db.schema.dropTable(shape.tables.day).execute();
    await db.schema.dropTable(shape.tables.hour).execute();
  }
}
