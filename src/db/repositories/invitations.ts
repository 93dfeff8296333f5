import type { Kysely, Selectable } from 'kysely';
import type { Database, InvitationsTable } from '../schema.js';

export type InvitationRow = Selectable<InvitationsTable>;

export async function insertInvitation(db: Kysely<Database>, invitation: InvitationRow): Promise<void> {
  await db.insertInto('invitations').values(invitation).execute();
}

export async function findInvitationByHash(db: Kysely<Database>, tokenHash: string) {
  return db
    .selectFrom('invitations')
    .innerJoin('accounts', 'accounts.id', 'invitations.account_id')
    .selectAll('invitations')
    .select('accounts.name as account_name')
    .where('invitations.token_hash', '=', tokenHash)
    .executeTakeFirst();
}

export async function findInvitationById(db: Kysely<Database>, id: string): Promise<InvitationRow | undefined> {
  return db.selectFrom('invitations').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Invitations of an account that can still be accepted, newest first. */
export async function listOpenInvitations(
  db: Kysely<Database>,
  accountId: string,
  now: number,
): Promise<InvitationRow[]> {
  return db
    .selectFrom('invitations')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .orderBy('created_at', 'desc')
    .execute();
}

export async function updateInvitation(
  db: Kysely<Database>,
  id: string,
  changes: Partial<Pick<InvitationRow, 'accepted_at' | 'revoked_at'>>,
): Promise<void> {
  await db.updateTable('invitations').set(changes).where('id', '=', id).execute();
}

/** Marks an invitation used; false when it already was (two people racing with one link: only one wins). */
export async function markInvitationAccepted(db: Kysely<Database>, id: string, at: number): Promise<boolean> {
  const result = await db
    .updateTable('invitations')
    .set({ accepted_at: at })
    .where('id', '=', id)
    .where('accepted_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
