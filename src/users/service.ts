import type { Kysely } from 'kysely';
import { requireAccount } from '../accounts/service.js';
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
  type UserRow,
  updateUser,
  upsertMembership,
} from '../db/repositories/users.js';
import type { Database } from '../db/schema.js';
import { apiError } from '../errors/api-error.js';
import { newId } from '../keys/format.js';
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
  };
}

/** Lower-cased and trimmed; a loose check (one @, no spaces): the real test of an address is that mail arrives. */
export function normaliseEmail(email: string, param = 'email'): string {
  const normalised = email.trim().toLowerCase();
  if (normalised.length > 254 || !/^[^\s@]+@[^\s@]+$/.test(normalised)) {
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
  input: { email: string; password?: string | undefined; admin?: boolean | undefined },
): Promise<User> {
  const email = normaliseEmail(input.email);
  if (input.password !== undefined) checkPasswordStrength(input.password);
  if (await findUserByEmail(db, email)) throw apiError('user_exists', `a user with e-mail ${email} already exists`);
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
  };
  await insertUser(db, row);
  return toUser(row);
}

/** By id or e-mail address; 404 otherwise. */
export async function requireUser(db: Kysely<Database>, idOrEmail: string): Promise<UserRow> {
  const row = idOrEmail.includes('@')
    ? await findUserByEmail(db, idOrEmail.trim().toLowerCase())
    : await findUserById(db, idOrEmail);
  if (!row) throw apiError('user_not_found', `no user "${idOrEmail}"`);
  return row;
}

export async function listAllUsers(db: Kysely<Database>): Promise<User[]> {
  return (await listUsers(db)).map(toUser);
}

export async function setUserPassword(db: Kysely<Database>, userId: string, password: string): Promise<void> {
  checkPasswordStrength(password);
  await updateUser(db, userId, { password_hash: await hashPassword(password), password_changed_at: Date.now() });
}

/** Changes the admin flag or disables a user; the last active admin cannot be demoted or disabled. */
export async function setUserFlags(
  db: Kysely<Database>,
  idOrEmail: string,
  flags: { admin?: boolean | undefined; disabled?: boolean | undefined },
): Promise<User> {
  const row = await requireUser(db, idOrEmail);
  const changes: Partial<Pick<UserRow, 'is_admin' | 'disabled'>> = {};
  if (flags.admin !== undefined) changes.is_admin = flags.admin ? 1 : 0;
  if (flags.disabled !== undefined) changes.disabled = flags.disabled ? 1 : 0;
  const losesAdmin = row.is_admin === 1 && row.disabled === 0 && (changes.is_admin === 0 || changes.disabled === 1);
  if (losesAdmin && (await countAdmins(db)) <= 1) {
    throw apiError('last_admin', 'this is the last active admin; make another user admin first');
  }
  await updateUser(db, row.id, changes);
  return toUser({ ...row, ...changes });
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

/** Adds a user to an account, or changes their role there. */
export async function addMember(db: Kysely<Database>, accountNameOrId: string, userIdOrEmail: string, role: Role) {
  const account = await requireAccount(db, accountNameOrId);
  const user = await requireUser(db, userIdOrEmail);
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
