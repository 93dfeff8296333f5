import type { Kysely } from 'kysely';

/**
 * The request log's provider filter leads an (account_id, provider, created_at, id) index like every other console
 * filter, so a page of a rarely used provider is an index seek rather than a walk through the account's whole log.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('request_log_account_provider_time')
    .on('request_log')
    .columns(['account_id', 'provider', 'created_at', 'id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('request_log_account_provider_time').execute();
}
