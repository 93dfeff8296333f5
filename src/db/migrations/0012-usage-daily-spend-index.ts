import type { Kysely } from 'kysely';

/**
 * The operator's spend per account (GET /api/usage/accounts, the accounts list) reads every account's daily rollups
 * over 30 or 90 days: through an index on the period alone, each of those rows was a lookup in the table. This index
 * holds what that report sums, so it is read from the index alone (docs/performance.md, "The request-log store").
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('usage_daily_period').execute();
  await db.schema
    .createIndex('usage_daily_period_spend')
    .on('usage_daily')
    .columns(['period_start', 'account_id', 'requests', 'errors', 'total_tokens', 'cost_usd'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('usage_daily_period_spend').execute();
  await db.schema.createIndex('usage_daily_period').on('usage_daily').column('period_start').execute();
}
