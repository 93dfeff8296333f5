import { type Kysely, sql } from 'kysely';
import { autoIncrementId, type Dialect } from './dialect.js';

/** Accounts, API keys, the access-change feed and the request log. */
export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  await db.schema
    .createTable('accounts')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('name', 'text', (column) => column.notNull().unique())
    .addColumn('allowed_models', 'text', (column) => column.notNull())
    .addColumn('disabled', 'integer', (column) => column.notNull().defaultTo(0))
    .addColumn('log_bodies', 'integer', (column) => column.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('account_id', 'text', (column) => column.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('name', 'text', (column) => column.notNull())
    .addColumn('environment', 'text')
    .addColumn('hmac', 'text', (column) => column.notNull().unique())
    .addColumn('display', 'text', (column) => column.notNull())
    .addColumn('allowed_models', 'text')
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('last_used_at', 'bigint')
    .addColumn('expires_at', 'bigint')
    .addColumn('revoked_at', 'bigint')
    .addColumn('replaced_by', 'text')
    .execute();
  await db.schema.createIndex('api_keys_account').on('api_keys').columns(['account_id', 'created_at']).execute();

  await autoIncrementId(db.schema.createTable('access_changes'), dialect)
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('kind', 'text', (column) => column.notNull())
    .addColumn('subject', 'text', (column) => column.notNull())
    .execute();

  // On PostgreSQL the log is partitioned by day (created_at, epoch ms), so retention drops whole partitions and
  // the disk space really comes back; the partition key must then be part of the primary key.
  const requestLogTable =
    dialect === 'postgres'
      ? db.schema
          .createTable('request_log')
          .addColumn('id', 'bigserial', (column) => column.notNull())
          .addPrimaryKeyConstraint('request_log_pkey', ['created_at', 'id'] as never)
          .modifyEnd(sql`partition by range (created_at)`)
      : autoIncrementId(db.schema.createTable('request_log'), dialect);
  await requestLogTable
    .addColumn('request_id', 'text', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('account_id', 'text', (column) => column.notNull())
    .addColumn('key_id', 'text', (column) => column.notNull())
    .addColumn('key_name', 'text', (column) => column.notNull())
    .addColumn('model', 'text', (column) => column.notNull())
    .addColumn('provider', 'text')
    .addColumn('upstream_model', 'text')
    .addColumn('status', 'integer', (column) => column.notNull())
    .addColumn('outcome', 'text', (column) => column.notNull())
    .addColumn('error_type', 'text')
    .addColumn('error_code', 'text')
    .addColumn('error_message', 'text')
    .addColumn('stream', 'integer', (column) => column.notNull())
    .addColumn('latency_ms', 'integer', (column) => column.notNull())
    .addColumn('ttft_ms', 'integer')
    .addColumn('prompt_tokens', 'integer')
    .addColumn('completion_tokens', 'integer')
    .addColumn('cached_tokens', 'integer')
    .addColumn('reasoning_tokens', 'integer')
    .addColumn('total_tokens', 'integer')
    .addColumn('usage_estimated', 'integer', (column) => column.notNull().defaultTo(0))
    .addColumn('cost_usd', 'double precision')
    .addColumn('user_agent', 'text')
    .addColumn('request_body', 'text')
    .addColumn('response_body', 'text')
    .execute();
  // Keyset pagination: newest first within one account, ties broken by id.
  await db.schema
    .createIndex('request_log_account_time')
    .on('request_log')
    .columns(['account_id', 'created_at', 'id'])
    .execute();
  if (dialect === 'postgres') {
    // Rows outside every daily partition land here instead of failing; maintenance keeps it empty.
    await sql`create table request_log_default partition of request_log default`.execute(db);
  } else {
    await db.schema.createIndex('request_log_time').on('request_log').column('created_at').execute();
  }
  await db.schema.createIndex('request_log_request_id').on('request_log').column('request_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('request_log').execute();
  await db.schema.dropTable('access_changes').execute();
  await db.schema.dropTable('api_keys').execute();
  await db.schema.dropTable('accounts').execute();
}
