import type { Kysely } from 'kysely';

/**
 * Two records the management API's trust rules need:
 * - users.invitation_account_id / invitation_inviter_id: a login created by accepting an account owner's invitation
 *   is tied to that account (and names who invited it) until its holder accepts another invitation or an operator
 *   confirms it; until then the operator is warned before trusting it anywhere else.
 * - api_keys.operator_limits / limits_set_by: the limits an operator set on a key (which bound what an account owner
 *   may set) and who set each limit.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('users').addColumn('invitation_account_id', 'text').execute();
  await db.schema.alterTable('users').addColumn('invitation_inviter_id', 'text').execute();
  await db.schema.alterTable('api_keys').addColumn('operator_limits', 'text').execute();
  await db.schema.alterTable('api_keys').addColumn('limits_set_by', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('api_keys').dropColumn('limits_set_by').execute();
  await db.schema.alterTable('api_keys').dropColumn('operator_limits').execute();
  await db.schema.alterTable('users').dropColumn('invitation_inviter_id').execute();
  await db.schema.alterTable('users').dropColumn('invitation_account_id').execute();
}
