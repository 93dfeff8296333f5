import type { Kysely } from 'kysely';
import { type AccountRow, findAccountById } from '../db/repositories/accounts.js';
import { findMembership } from '../db/repositories/users.js';
import type { Database } from '../db/schema.js';
import { apiError } from '../errors/api-error.js';
import type { Role } from '../users/service.js';

/**
 * Who may act on an account through the management API. Every route that touches an account's data calls
 * authorizeAccount first; there is no other path to an account's keys, log, usage, models or members.
 *
 * - An admin may do anything to any account.
 * - A member (owner or member role) may read the account and manage its keys.
 * - Only an owner (or an admin) may manage the account's members and invitations, and change key limits (an owner
 *   only within what an operator set: limits/key-limits.ts).
 * - Only an admin may change the account itself (models, disabled, body logging): those are the operator's terms.
 *
 * An account the caller is not a member of gets the same 404 as one that does not exist, so ids cannot be probed.
 * A management token narrowed to one account cannot reach any other, whatever its user could.
 */

export interface Caller {
  userId: string;
  email: string;
  admin: boolean;
  via: 'session' | 'token';
  /** The session's id (the hash of its cookie) when signed in through the console. */
  sessionId?: string;
  /** Set when a management token is narrowed to one account. */
  accountScope: string | null;
}

export type AccountAction = 'read' | 'manage-keys' | 'manage-limits' | 'manage-members' | 'configure';

export interface AccountAccess {
  account: AccountRow;
  /** The caller's role in the account; null for an admin who is not a member. */
  role: Role | null;
}

export const accountNotFound = (accountId: string) =>
  apiError('account_not_found', `no account with id "${accountId.slice(0, 64)}"`);

export async function authorizeAccount(
  db: Kysely<Database>,
  caller: Caller,
  accountId: string,
  action: AccountAction,
): Promise<AccountAccess> {
  if (caller.accountScope !== null && caller.accountScope !== accountId) throw accountNotFound(accountId);
  const account = await findAccountById(db, accountId);
  if (!account) throw accountNotFound(accountId);
  const membership = await findMembership(db, caller.userId, accountId);
  const role = (membership?.role as Role | undefined) ?? null;
  if (caller.admin) return { account, role };
  if (role === null) throw accountNotFound(accountId);
  if (action === 'configure') {
    throw apiError('admin_only', "Only an operator (admin) can change an account's models, status and body logging.");
  }
  if (action === 'manage-members' && role !== 'owner') {
    throw apiError('owner_only', "Only the account's owners can manage its members and invitations.");
  }
  if (action === 'manage-limits' && role !== 'owner') {
    throw apiError('owner_only', "Only the account's owners (and operators) can change a key's limits and budgets.");
  }
  return { account, role };
}

/** For operator-wide routes (all accounts, all users, the whole log): an admin not narrowed to one account. */
export function requireAdmin(caller: Caller): void {
  if (!caller.admin || caller.accountScope !== null) {
    throw apiError('admin_only', 'This requires an operator (admin) account.');
  }
}
