import type { Kysely } from 'kysely';

/**
 * Console users, their account memberships, sessions, management tokens and invitations; plus the request-log
 * indexes the console's filters need (each filter is an equality on a column placed before created_at, so a
 * filtered page is still an index range walked newest first, however many rows the account has).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('users')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('email', 'text', (column) => column.notNull().unique())
    .addColumn('password_hash', 'text')
    .addColumn('is_admin', 'integer', (column) => column.notNull().defaultTo(0))
    .addColumn('disabled', 'integer', (column) => column.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('last_sign_in_at', 'bigint')
    .addColumn('password_changed_at', 'bigint')
    .execute();

  await db.schema
    .createTable('memberships')
    .addColumn('user_id', 'text', (column) => column.notNull().references('users.id').onDelete('cascade'))
    .addColumn('account_id', 'text', (column) => column.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('role', 'text', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addPrimaryKeyConstraint('memberships_pk', ['user_id', 'account_id'])
    .execute();
  await db.schema.createIndex('memberships_account').on('memberships').column('account_id').execute();

  await db.schema
    .createTable('sessions')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('user_id', 'text', (column) => column.notNull().references('users.id').onDelete('cascade'))
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('last_seen_at', 'bigint', (column) => column.notNull())
    .addColumn('expires_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('sessions_user').on('sessions').column('user_id').execute();
  await db.schema.createIndex('sessions_expiry').on('sessions').column('expires_at').execute();

  await db.schema
    .createTable('management_tokens')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('user_id', 'text', (column) => column.notNull().references('users.id').onDelete('cascade'))
    .addColumn('account_id', 'text', (column) => column.references('accounts.id').onDelete('cascade'))
    .addColumn('name', 'text', (column) => column.notNull())
    .addColumn('token_hash', 'text', (column) => column.notNull().unique())
    .addColumn('display', 'text', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('last_used_at', 'bigint')
    .addColumn('expires_at', 'bigint')
    .addColumn('revoked_at', 'bigint')
    .execute();
  await db.schema.createIndex('management_tokens_user').on('management_tokens').column('user_id').execute();

  await db.schema
    .createTable('invitations')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('account_id', 'text', (column) => column.notNull().references('accounts.id').onDelete('cascade'))
    .addColumn('email', 'text', (column) => column.notNull())
    .addColumn('role', 'text', (column) => column.notNull())
    .addColumn('token_hash', 'text', (column) => column.notNull().unique())
    .addColumn('created_by', 'text')
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('expires_at', 'bigint', (column) => column.notNull())
    .addColumn('accepted_at', 'bigint')
    .addColumn('revoked_at', 'bigint')
    .execute();
  await db.schema.createIndex('invitations_account').on('invitations').columns(['account_id', 'created_at']).execute();

  await db.schema
    .createIndex('request_log_account_key_time')
    .on('request_log')
    .columns(['account_id', 'key_id', 'created_at', 'id'])
    .execute();
  await db.schema
    .createIndex('request_log_account_model_time')
    .on('request_log')
    .columns(['account_id', 'model', 'created_at', 'id'])
    .execute();
  await db.schema
    .createIndex('request_log_account_outcome_time')
    .on('request_log')
    .columns(['account_id', 'outcome', 'created_at', 'id'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('request_log_account_outcome_time').execute();
  await db.schema.dropIndex('request_log_account_model_time').execute();
  await db.schema.dropIndex('request_log_account_key_time').execute();
  await db.schema.dropTable('invitations').execute();
  await db.schema.dropTable('management_tokens').execute();
  await db.schema.dropTable('sessions').execute();
  await db.schema.dropTable('memberships').execute();
  await db.schema.dropTable('users').execute();
}
