import type { Kysely } from 'kysely';
import { revokeManagementTokensOfUser } from '../db/repositories/management-tokens.js';
import { deleteSessionsOfUser } from '../db/repositories/sessions.js';
import { type UserRow, updateUser } from '../db/repositories/users.js';
import type { Database } from '../db/schema.js';
import { checkPasswordStrength, hashPassword } from './password.js';

/**
 * A new password for a user who has one: the user changing it, or the operator resetting it. Whoever knew the old
 * password may have made themselves a way back in, so every session ends and every management token of the
 * user is revoked with it (a token acts as its user; one made by someone who had the password would outlive it).
 */

export interface PasswordChanged {
  sessionsEnded: number;
  managementTokensRevoked: number;
}

export async function changePassword(
  db: Kysely<Database>,
  user: Pick<UserRow, 'id' | 'email'>,
  password: string,
): Promise<PasswordChanged> {
  await checkPasswordStrength(password, { param: 'newPassword', userInputs: [user.email] });
  const hash = await hashPassword(password);
  return db.transaction().execute(async (transaction) => {
    const now = Date.now();
    await updateUser(transaction, user.id, { password_hash: hash, password_changed_at: now });
    const sessionsEnded = await deleteSessionsOfUser(transaction, user.id);
    const managementTokensRevoked = await revokeManagementTokensOfUser(transaction, user.id, now);
    return { sessionsEnded, managementTokensRevoked };
  });
}

/** Stores the same password under the current hashing cost (at sign-in, when the stored hash is older). */
export async function rehashPassword(db: Kysely<Database>, userId: string, password: string): Promise<void> {
  await updateUser(db, userId, { password_hash: await hashPassword(password) });
}

/** "2 other sessions ended and 1 management token revoked", for messages. */
export function describePasswordChange(changed: PasswordChanged, sessions = 'sessions'): string {
  const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? '' : 's'}`;
  return `${plural(changed.sessionsEnded, sessions.replace(/s$/, ''))} ended and ${plural(
    changed.managementTokensRevoked,
    'management token',
  )} revoked`;
}
