import type { Kysely } from 'kysely';

/** Limits stored per account and per key (JSON; absent fields fall back to the configured defaults). */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('accounts').addColumn('limits', 'text').execute();
  await db.schema.alterTable('api_keys').addColumn('limits', 'text').execute();
  // Budgets of a key are seeded from what the log says it spent in the period.
  await db.schema.createIndex('request_log_key_time').on('request_log').columns(['key_id', 'created_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('request_log_key_time').execute();
  await db.schema.alterTable('api_keys').dropColumn('limits').execute();
  await db.schema.alterTable('accounts').dropColumn('limits').execute();
}
