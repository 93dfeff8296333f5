import type { Kysely, Selectable } from 'kysely';
import type { Database, MembershipsTable, UsersTable } from '../schema.js';

export type UserRow = Selectable<UsersTable>;
export type MembershipRow = Selectable<MembershipsTable>;

export async function insertUser(db: Kysely<Database>, user: UserRow): Promise<void> {
  await db.insertInto('users').values(user).execute();
}

export async function findUserByEmail(db: Kysely<Database>, email: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst();
}

export async function findUserById(db: Kysely<Database>, id: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function listUsers(db: Kysely<Database>): Promise<UserRow[]> {
  return db.selectFrom('users').selectAll().orderBy('email').execute();
}

export async function countAdmins(db: Kysely<Database>): Promise<number> {
  const row = await db
    .selectFrom('users')
    .select((select) => select.fn.countAll().as('admins'))
    .where('is_admin', '=', 1)
    .where('disabled', '=', 0)
    .executeTakeFirst();
  return Number(row?.admins ?? 0);
}

export async function updateUser(
  db: Kysely<Database>,
  id: string,
  changes: Partial<
    Pick<
      UserRow,
      | 'password_hash'
      | 'is_admin'
      | 'disabled'
      | 'last_sign_in_at'
      | 'password_changed_at'
      | 'invitation_account_id'
      | 'invitation_inviter_id'
    >
  >,
): Promise<void> {
  await db.updateTable('users').set(changes).where('id', '=', id).execute();
}

export async function findMembership(
  db: Kysely<Database>,
  userId: string,
  accountId: string,
): Promise<MembershipRow | undefined> {
  return db
    .selectFrom('memberships')
    .selectAll()
    .where('user_id', '=', userId)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
}

/** A user's memberships with the account names, for the console's account switcher. */
export async function listMembershipsOfUser(db: Kysely<Database>, userId: string) {
  return db
    .selectFrom('memberships')
    .innerJoin('accounts', 'accounts.id', 'memberships.account_id')
    .select([
      'memberships.account_id',
      'accounts.name as account_name',
      'accounts.disabled as account_disabled',
      'memberships.role',
      'memberships.created_at',
    ])
    .where('memberships.user_id', '=', userId)
    .orderBy('accounts.name')
    .execute();
}

/** An account's members with their e-mail addresses. */
export async function listMembersOfAccount(db: Kysely<Database>, accountId: string) {
  return db
    .selectFrom('memberships')
    .innerJoin('users', 'users.id', 'memberships.user_id')
    .select([
      'memberships.user_id',
      'users.email',
      'users.disabled',
      'users.last_sign_in_at',
      'memberships.role',
      'memberships.created_at',
    ])
    .where('memberships.account_id', '=', accountId)
    .orderBy('users.email')
    .execute();
}

/** Adds a membership or changes the role of an existing one. */
export async function upsertMembership(db: Kysely<Database>, membership: MembershipRow): Promise<void> {
  const existing = await findMembership(db, membership.user_id, membership.account_id);
  if (existing) {
    await db
      .updateTable('memberships')
      .set({ role: membership.role })
      .where('user_id', '=', membership.user_id)
      .where('account_id', '=', membership.account_id)
      .execute();
  } else {
    await db.insertInto('memberships').values(membership).execute();
  }
}

export async function deleteMembership(db: Kysely<Database>, userId: string, accountId: string): Promise<void> {
  await db.deleteFrom('memberships').where('user_id', '=', userId).where('account_id', '=', accountId).execute();
}

/**
 * Holds the account's row locked until the transaction ends, so that changes to its members run one after the other:
 * two owners demoted at once must not each count the other and leave none, nor invitations made at once each find
 * room under the cap on open ones. An UPDATE that changes nothing takes the lock on PostgreSQL (as SELECT … FOR UPDATE
 * would, which SQLite cannot parse) and SQLite's write lock first; SQLite runs one transaction at a time.
 */
export async function lockAccountMembers(db: Kysely<Database>, accountId: string): Promise<void> {
  await db
    .updateTable('accounts')
    .set((row) => ({ name: row.ref('name') }))
    .where('id', '=', accountId)
    .execute();
}

/** The same for the active admins' rows, before the last one may be demoted or disabled (see lockAccountMembers). */
export async function lockActiveAdmins(db: Kysely<Database>): Promise<void> {
  await db
    .updateTable('users')
    .set((row) => ({ is_admin: row.ref('is_admin') }))
    .where('is_admin', '=', 1)
    .where('disabled', '=', 0)
    .execute();
}

export async function countOwners(db: Kysely<Database>, accountId: string): Promise<number> {
  const row = await db
    .selectFrom('memberships')
    .select((select) => select.fn.countAll().as('owners'))
    .where('account_id', '=', accountId)
    .where('role', '=', 'owner')
    .executeTakeFirst();
  return Number(row?.owners ?? 0);
}

export async function updateUserEmail(db: Kysely<Database>, id: string, email: string): Promise<void> {
  await db.updateTable('users').set({ email }).where('id', '=', id).execute();
}

/** Deletes a user with their memberships, sessions and management tokens (rows that cannot outlive them). */
export async function deleteUserAndTheirRows(db: Kysely<Database>, id: string): Promise<void> {
  await db.deleteFrom('sessions').where('user_id', '=', id).execute();
  await db.deleteFrom('management_tokens').where('user_id', '=', id).execute();
  await db.deleteFrom('memberships').where('user_id', '=', id).execute();
  await db.deleteFrom('users').where('id', '=', id).execute();
}
