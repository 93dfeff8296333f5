import type { Kysely } from 'kysely';
import { revokeManagementTokensOfUser } from '../db/repositories/management-tokens.js';
import { deleteSessionsOfUser } from '../db/repositories/sessions.js';
import {
  countAdmins,
  countOwners,
  deleteUserAndTheirRows,
  findUserByEmail,
  findUserById,
  listMembershipsOfUser,
  lockAccountMembers,
  lockActiveAdmins,
  updateUserEmail,
} from '../db/repositories/users.js';
import type { Database } from '../db/schema.js';
import { isUniqueViolation } from '../db/unique-violation.js';
import { apiError } from '../errors/api-error.js';
import { refuseLookAlikeEmail } from './look-alike-email.js';
import { normaliseEmail, requireUser } from './service.js';

/**
 * The operator's changes to a login itself (`switchboard users rename`, `users delete`). Either way every session of
 * the login ends and every management token is revoked: a new address may mean a new holder, and a deleted login's
 * cookies and tokens must not outlive it.
 */

export interface LoginEnded {
  sessionsEnded: number;
  managementTokensRevoked: number;
}

/** Gives a login another address, checked as a new login's would be (folded, no look-alikes, not taken). */
export async function renameUser(
  db: Kysely<Database>,
  idOrEmail: string,
  newEmail: string,
  param = 'email',
): Promise<{ id: string; from: string; to: string } & LoginEnded> {
  const user = await requireUser(db, idOrEmail);
  const email = normaliseEmail(newEmail, param);
  await refuseLookAlikeEmail(email, param);
  if (email === user.email) {
    throw apiError('invalid_value', `${user.email} already has that address`, { param });
  }
  const taken = () => apiError('user_exists', `a user with e-mail ${email} already exists`, { param });
  if (await findUserByEmail(db, email)) throw taken();
  try {
    return await db.transaction().execute(async (transaction) => {
      await updateUserEmail(transaction, user.id, email);
      const sessionsEnded = await deleteSessionsOfUser(transaction, user.id);
      const managementTokensRevoked = await revokeManagementTokensOfUser(transaction, user.id, Date.now());
      return { id: user.id, from: user.email, to: email, sessionsEnded, managementTokensRevoked };
    });
  } catch (error) {
    // Taken by a concurrent change since the check above.
    if (isUniqueViolation(error)) throw taken();
    throw error;
  }
}

/**
 * Deletes a login with its memberships, sessions and management tokens. The last active admin, and the last owner
 * of an account, are refused: make another one first (as for demoting them). Invitations the login made stop
 * working (their inviter is gone); who set a key's limits keeps naming the id.
 */
export async function deleteUser(
  db: Kysely<Database>,
  idOrEmail: string,
): Promise<{ id: string; email: string } & LoginEnded> {
  const user = await requireUser(db, idOrEmail);
  return db.transaction().execute(async (transaction) => {
    // As for a demotion: two admins (or owners) deleted at once must not each count the other and leave none.
    await lockActiveAdmins(transaction);
    const current = await findUserById(transaction, user.id);
    if (!current) throw apiError('user_not_found', `no user "${idOrEmail}"`);
    if (current.is_admin === 1 && current.disabled === 0 && (await countAdmins(transaction)) <= 1) {
      throw apiError('last_admin', `${current.email} is the last active admin; make another user admin first`);
    }
    for (const membership of await listMembershipsOfUser(transaction, current.id)) {
      if (membership.role !== 'owner') continue;
      await lockAccountMembers(transaction, membership.account_id);
      if ((await countOwners(transaction, membership.account_id)) <= 1) {
        throw apiError(
          'last_owner',
          `${current.email} is the last owner of the account ${membership.account_name}; make another member ` +
            'owner first (switchboard users add-to-account … --role owner)',
        );
      }
    }
    const sessionsEnded = await deleteSessionsOfUser(transaction, current.id);
    const managementTokensRevoked = await revokeManagementTokensOfUser(transaction, current.id, Date.now());
    await deleteUserAndTheirRows(transaction, current.id);
    return { id: current.id, email: current.email, sessionsEnded, managementTokensRevoked };
  });
}
