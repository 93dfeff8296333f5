import { type Kysely, sql } from 'kysely';
import type { Dialect } from './dialect.js';

/**
 * A stored response becomes one row (docs/performance.md, "`/v1/responses`"): its input and output items are two JSON
 * arrays on `responses` instead of a row each in `response_items`, and `response_item_ids` keeps only what finds an
 * item by its id within the account (an `item_reference`): a narrow key, WITHOUT ROWID on SQLite, so one B-tree entry
 * per item. `item_ids` on the response lists its items' ids, so deleting it deletes their keys without reading its
 * items. Rows of the old layout are carried over in place.
 */
export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  for (const column of ['input_items', 'output_items', 'item_ids']) {
    await db.schema
      .alterTable('responses')
      .addColumn(column, 'text', (definition) => definition.notNull().defaultTo('[]'))
      .execute();
  }
  let create = db.schema
    .createTable('response_item_ids')
    .addColumn('account_id', 'text', (column) => column.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('item_id', 'text', (column) => column.notNull())
    .addColumn('response_id', 'text', (column) => column.notNull())
    .addPrimaryKeyConstraint('response_item_ids_pk', ['account_id', 'item_id', 'response_id']);
  if (dialect === 'sqlite') create = create.modifyEnd(sql`without rowid`);
  await create.execute();

  // Both engines aggregate in order (SQLite since 3.44; better-sqlite3 bundles a later one).
  const idArray =
    dialect === 'postgres'
      ? sql`json_agg(item_id order by position)::text`
      : sql`json_group_array(item_id order by position)`;
  await sql`
    update responses set
      input_items = coalesce((select '[' || string_agg(item, ',' order by position) || ']' from response_items
        where response_id = responses.id and position < responses.input_count), '[]'),
      output_items = coalesce((select '[' || string_agg(item, ',' order by position) || ']' from response_items
        where response_id = responses.id and position >= responses.input_count), '[]'),
      item_ids = coalesce((select ${idArray} from response_items where response_id = responses.id), '[]')`.execute(db);
  await sql`
    insert into response_item_ids (account_id, item_id, response_id)
    select distinct account_id, item_id, response_id from response_items`.execute(db);
  await db.schema.dropTable('response_items').execute();
}

export async function down(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
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
  // Each array's elements in order, the output after the input (`json`, not `jsonb`, keeps each item's text as is).
  const items =
    dialect === 'postgres'
      ? sql`
        select responses.id, element.position - 1 as position, responses.account_id,
          coalesce(element.value ->> 'id', '') as item_id, element.value::text as item
        from responses, json_array_elements(responses.input_items::json) with ordinality as element(value, position)
        union all
        select responses.id, responses.input_count + element.position - 1, responses.account_id,
          coalesce(element.value ->> 'id', ''), element.value::text
        from responses, json_array_elements(responses.output_items::json) with ordinality as element(value, position)`
      : sql`
        select responses.id, element.key, responses.account_id, coalesce(element.value ->> '$.id', ''), element.value
        from responses, json_each(responses.input_items) as element
        union all
        select responses.id, responses.input_count + element.key, responses.account_id,
          coalesce(element.value ->> '$.id', ''), element.value
        from responses, json_each(responses.output_items) as element`;
  await sql`insert into response_items (response_id, position, account_id, item_id, item) ${items}`.execute(db);
  await db.schema.dropTable('response_item_ids').execute();
  for (const column of ['item_ids', 'output_items', 'input_items']) {
    await db.schema.alterTable('responses').dropColumn(column).execute();
  }
}
