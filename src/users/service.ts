import type { Kysely } from 'kysely';
import { requireAccount } from '../accounts/service.js';
import { findAccountById } from '../db/repositories/accounts.js';
import { revokeManagementTokensOfUser } from '../db/repositories/management-tokens.js';
import { deleteSessionsOfUser } from '../db/repositories/sessions.js';
import {
  countAdmins,
  countOwners,
  deleteMembership,
  findMembership,
  findUserByEmail,
  findUserById,
  insertUser,
  listMembersOfAccount,
  listUsers,
  lockAccountMembers,
  lockActiveAdmins,
  type UserRow,
  updateUser,
  upsertMembership,
} from '../db/repositories/users.js';
import type { Database } from '../db/schema.js';
import { isUniqueViolation } from '../db/unique-violation.js';
import { apiError } from '../errors/api-error.js';
import { newId } from '../keys/format.js';
import { refuseLookAlikeEmail } from './look-alike-email.js';
import { checkPasswordStrength, hashPassword } from './password.js';

/** Console users and their memberships (CLI and management API). Sign-in and sessions are in sessions.ts. */

export type Role = 'owner' | 'member';
export const roles: readonly Role[] = ['owner', 'member'];

export interface User {
  id: string;
  email: string;
  admin: boolean;
  disabled: boolean;
  /** false until the user has set a password (an invited user who has not accepted yet). */
  hasPassword: boolean;
  createdAt: string;
  lastSignInAt: string | null;
  /**
   * Set while the login is tied to the account whose owner's invitation created it: whoever opened that link chose
   * the password, so the operator is asked to confirm before trusting the login with anything else.
   */
  createdByInvitation: { accountId: string; invitedBy: string | null } | null;
}

export interface Member {
  userId: string;
  email: string;
  role: Role;
  disabled: boolean;
  lastSignInAt: string | null;
  since: string;
}

const isoOrNull = (time: number | null): string | null => (time === null ? null : new Date(Number(time)).toISOString());

export function toUser(row: UserRow): User {
  return {
    id: row.id,
    email: row.email,
    admin: row.is_admin === 1,
    disabled: row.disabled === 1,
    hasPassword: row.password_hash !== null,
    createdAt: new Date(Number(row.created_at)).toISOString(),
    lastSignInAt: isoOrNull(row.last_sign_in_at),
    createdByInvitation:
      row.invitation_account_id === null
        ? null
        : { accountId: row.invitation_account_id, invitedBy: row.invitation_inviter_id },
  };
}

/**
 * The form an address is stored and looked up in: compatibility forms folded (NFKC: a full-width "ａｄｍｉｎ" is
 * "admin"), lower-cased, trimmed.
 */
function foldEmail(email: string): string {
  return email.normalize('NFKC').trim().toLowerCase();
}

/**
 * Folded (foldEmail); a loose check (one @, no spaces): the real test of an address is that mail arrives. Characters
 * that show as nothing or rearrange the text around them (controls, zero-width and bidirectional marks: Unicode's
 * "other" and separator categories) are refused, so that no address reads exactly like another one on a screen.
 */
export function normaliseEmail(email: string, param = 'email'): string {
  const normalised = foldEmail(email);
  if (normalised.length > 254 || !/^[^\s@]+@[^\s@]+$/.test(normalised) || /[\p{C}\p{Z}]/u.test(normalised)) {
    throw apiError('invalid_email', `"${email.slice(0, 64)}" is not an e-mail address`, { param });
  }
  return normalised;
}

export function parseRole(role: string, param = 'role'): Role {
  if (role === 'owner' || role === 'member') return role;
  throw apiError('invalid_role', `role must be "owner" or "member"`, { param });
}

export async function createUser(
  db: Kysely<Database>,
  input: {
    email: string;
    password?: string | undefined;
    admin?: boolean | undefined;
    /** The invitation whose acceptance creates the login, when an account owner (not an operator) made it. */
    tiedTo?: { accountId: string; inviterId: string } | undefined;
  },
): Promise<User> {
  const email = normaliseEmail(input.email);
  await refuseLookAlikeEmail(email);
  if (input.password !== undefined) await checkPasswordStrength(input.password, { userInputs: [email] });
  const exists = () => apiError('user_exists', `a user with e-mail ${email} already exists`);
  if (await findUserByEmail(db, email)) throw exists();
  const now = Date.now();
  const row: UserRow = {
    id: newId('user'),
    email,
    password_hash: input.password === undefined ? null : await hashPassword(input.password),
    is_admin: input.admin ? 1 : 0,
    disabled: 0,
    created_at: now,
    last_sign_in_at: null,
    password_changed_at: input.password === undefined ? null : now,
    invitation_account_id: input.tiedTo?.accountId ?? null,
    invitation_inviter_id: input.tiedTo?.inviterId ?? null,
  };
  try {
    await insertUser(db, row);
  } catch (error) {
    // Created by a concurrent request since the check above (hashing the password takes a while).
    if (isUniqueViolation(error)) throw exists();
    throw error;
  }
  return toUser(row);
}

/** By id or e-mail address; 404 otherwise. */
export async function requireUser(db: Kysely<Database>, idOrEmail: string): Promise<UserRow> {
  const row = idOrEmail.includes('@')
    ? await findUserByEmail(db, foldEmail(idOrEmail))
    : await findUserById(db, idOrEmail);
  if (!row) throw apiError('user_not_found', `no user "${idOrEmail}"`);
  return row;
}

export async function listAllUsers(db: Kysely<Database>): Promise<User[]> {
  return (await listUsers(db)).map(toUser);
}

/**
 * Refuses to trust a login tied to the account whose owner's invitation created it (see User.createdByInvitation)
 * with anything beyond that account, unless the operator confirms; a confirmed login is no longer tied.
 */
export async function requireTrustedLogin(
  db: Kysely<Database>,
  user: UserRow,
  forAccountId: string | null,
  confirmed: boolean,
  howToConfirm: string,
): Promise<void> {
  if (user.invitation_account_id === null || user.invitation_account_id === forAccountId) return;
  if (!confirmed) {
    const account = await findAccountById(db, user.invitation_account_id);
    const inviter =
      user.invitation_inviter_id === null ? undefined : await findUserById(db, user.invitation_inviter_id);
    throw apiError(
      'login_created_by_invitation',
      `The login ${user.email} was created on ${new Date(Number(user.created_at)).toISOString().slice(0, 10)} by ` +
        `accepting an invitation to the account ${account?.name ?? user.invitation_account_id} made by ` +
        `${inviter?.email ?? 'a user who no longer exists'}, not by an operator: whoever opened that link chose ` +
        `its password, and it may not be the person who owns the address. Make sure it is, then ${howToConfirm}.`,
    );
  }
  await updateUser(db, user.id, { invitation_account_id: null, invitation_inviter_id: null });
  // The caller's row goes on to be shown (setUserFlags): it must not still say the login is tied.
  user.invitation_account_id = null;
  user.invitation_inviter_id = null;
}

/** Changes the admin flag or disables a user; the last active admin cannot be demoted or disabled. */
export async function setUserFlags(
  db: Kysely<Database>,
  idOrEmail: string,
  flags: { admin?: boolean | undefined; disabled?: boolean | undefined },
  options: { confirmInvitedLogin?: boolean; howToConfirm?: string } = {},
): Promise<User> {
  const row = await requireUser(db, idOrEmail);
  if (flags.admin === true && row.is_admin === 0) {
    await requireTrustedLogin(
      db,
      row,
      null,
      options.confirmInvitedLogin === true,
      options.howToConfirm ?? 'confirm it',
    );
  }
  const changes: Partial<Pick<UserRow, 'is_admin' | 'disabled'>> = {};
  if (flags.admin !== undefined) changes.is_admin = flags.admin ? 1 : 0;
  if (flags.disabled !== undefined) changes.disabled = flags.disabled ? 1 : 0;
  return db.transaction().execute(async (transaction) => {
    // Two admins demoted at once must not each count the other and leave none: the admins' rows stay locked.
    await lockActiveAdmins(transaction);
    const current = (await findUserById(transaction, row.id)) ?? row;
    const losesAdmin =
      current.is_admin === 1 && current.disabled === 0 && (changes.is_admin === 0 || changes.disabled === 1);
    if (losesAdmin && (await countAdmins(transaction)) <= 1) {
      throw apiError('last_admin', 'this is the last active admin; make another user admin first');
    }
    await updateUser(transaction, row.id, changes);
    // A disabled user's sessions end and their management tokens are revoked, for good: enabling them again must not
    // revive a cookie or a token someone else copied (a user is disabled when they left or their login is in doubt).
    if (changes.disabled === 1) {
      await deleteSessionsOfUser(transaction, row.id);
      await revokeManagementTokensOfUser(transaction, row.id, Date.now());
    }
    return toUser({ ...current, ...changes });
  });
}

export async function listMembers(db: Kysely<Database>, accountId: string): Promise<Member[]> {
  return (await listMembersOfAccount(db, accountId)).map((row) => ({
    userId: row.user_id,
    email: row.email,
    role: parseRole(row.role),
    disabled: row.disabled === 1,
    lastSignInAt: isoOrNull(row.last_sign_in_at),
    since: new Date(Number(row.created_at)).toISOString(),
  }));
}

/**
 * Adds a user to an account, or changes their role there (the operator's `users add-to-account`). A login tied to
 * another account by the invitation that created it needs the operator's confirmation (see requireTrustedLogin).
 */
export async function addMember(
  db: Kysely<Database>,
  accountNameOrId: string,
  userIdOrEmail: string,
  role: Role,
  options: { confirmInvitedLogin?: boolean; howToConfirm?: string } = {},
) {
  const account = await requireAccount(db, accountNameOrId);
  const user = await requireUser(db, userIdOrEmail);
  await requireTrustedLogin(
    db,
    user,
    account.id,
    options.confirmInvitedLogin === true,
    options.howToConfirm ?? 'confirm it',
  );
  await db.transaction().execute(async (transaction) => {
    await guardLastOwner(transaction, account.id, user.id, role);
    await upsertMembership(transaction, { user_id: user.id, account_id: account.id, role, created_at: Date.now() });
  });
  return { account, user };
}

/** An account that has owners keeps at least one: demoting or removing the last owner is refused. */
async function guardLastOwner(
  db: Kysely<Database>,
  accountId: string,
  userId: string,
  newRole: Role | undefined,
): Promise<void> {
  await lockAccountMembers(db, accountId);
  const current = await findMembership(db, userId, accountId);
  if (current?.role !== 'owner' || newRole === 'owner') return;
  if ((await countOwners(db, accountId)) <= 1) {
    throw apiError('last_owner', 'this is the last owner of the account; make another member owner first');
  }
}

export async function setMemberRole(db: Kysely<Database>, accountId: string, userId: string, role: Role) {
  await db.transaction().execute(async (transaction) => {
    if (!(await findMembership(transaction, userId, accountId))) {
      throw apiError('member_not_found', 'no such member of this account');
    }
    await guardLastOwner(transaction, accountId, userId, role);
    await upsertMembership(transaction, { user_id: userId, account_id: accountId, role, created_at: Date.now() });
  });
}

export async function removeMember(db: Kysely<Database>, accountId: string, userId: string): Promise<void> {
  await db.transaction().execute(async (transaction) => {
    if (!(await findMembership(transaction, userId, accountId))) {
      throw apiError('member_not_found', 'no such member of this account');
    }
    await guardLastOwner(transaction, accountId, userId, undefined);
    await deleteMembership(transaction, userId, accountId);
  });
}
