import type { Kysely } from 'kysely';

/**
 * Stored `/v1/responses` answers (the default `store: true`), so any node can continue a conversation
 * (`previous_response_id`), resolve an `item_reference`, or answer `GET /v1/responses/{id}`:
 * - `responses`: one row per stored response: its account and key (never the key itself), the response object as JSON
 *   without its output, the response it continues, and when it expires (the retention job deletes it then);
 * - `response_items`: its input items, then its output items, one row each in order (`position`), so a conversation
 *   is replayed by walking `previous_response_id` without any response repeating the ones before it, and an item is
 *   found by its id within the account.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('responses')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('account_id', 'text', (column) => column.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('key_id', 'text', (column) => column.notNull())
    .addColumn('model', 'text', (column) => column.notNull())
    .addColumn('previous_response_id', 'text')
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('expires_at', 'bigint', (column) => column.notNull())
    .addColumn('input_count', 'integer', (column) => column.notNull())
    .addColumn('stored_bytes', 'integer', (column) => column.notNull())
    .addColumn('response', 'text', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('responses_expiry').on('responses').column('expires_at').execute();

  await db.schema
    .createTable('response_items')
    .addColumn('response_id', 'text', (column) => column.notNull().references('responses.id').onDelete('cascade'))
    .addColumn('position', 'integer', (column) => column.notNull())
    .addColumn('account_id', 'text', (column) => column.notNull())
    .addColumn('item_id', 'text', (column) => column.notNull())
    .addColumn('item', 'text', (column) => column.notNull())
    .addPrimaryKeyConstraint('response_items_pk', ['response_id', 'position'])
    .execute();
  await db.schema
    .createIndex('response_items_account_item')
    .on('response_items')
    .columns(['account_id', 'item_id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('response_items').execute();
  await db.schema.dropTable('responses').execute();
}
