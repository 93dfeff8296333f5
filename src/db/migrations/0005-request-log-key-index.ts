import type { Kysely } from 'kysely';

/**
 * The request log loses its (key_id, created_at) index: a key's spend is now read through the account's
 * (account_id, key_id, created_at, id) index (the query names the key's account), and every index costs every insert
 * (docs/performance.md, "The request-log store").
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('request_log_key_time').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('request_log_key_time').on('request_log').columns(['key_id', 'created_at']).execute();
}
