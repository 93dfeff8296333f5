import type { Kysely } from 'kysely';

/**
 * The request log gets `endpoint`: which data-plane endpoint served the row (`chat_completions`, `models`, `model`,
 * and each endpoint added later under its own name). Rows written before stay NULL. Like every console filter it
 * leads an (account_id, X, created_at, id) index, so a page filtered by a rarely used endpoint is still an index seek
 * rather than a walk through the account's whole log. On PostgreSQL both reach every daily partition.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('request_log').addColumn('endpoint', 'text').execute();
  await db.schema
    .createIndex('request_log_account_endpoint_time')
    .on('request_log')
    .columns(['account_id', 'endpoint', 'created_at', 'id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('request_log_account_endpoint_time').execute();
  await db.schema.alterTable('request_log').dropColumn('endpoint').execute();
}
