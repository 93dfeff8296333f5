import { type Kysely, sql } from 'kysely';

/**
 * A stored response's `state`: NULL for a response stored whole (every row before this migration), or what a row that
 * is not one stands for, so that every node answers alike for an id the gateway gave a client
 * (db/repositories/responses.ts): `unstored`, a response answered but grown too large to store (its `response` holds
 * `{"bytes","limit_bytes"}`, it has no items); `in_progress`, a response still streaming (its settings as it began, no
 * items), which the response replaces when it ends; `deleted`, one deleted while it streamed, which it does not.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('responses').addColumn('state', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  // Rows that stand for something else would read as empty stored responses without the column.
  await sql`delete from response_item_ids where response_id in (select id from responses where state is not null)`.execute(
    db,
  );
  await sql`delete from responses where state is not null`.execute(db);
  await db.schema.alterTable('responses').dropColumn('state').execute();
}
