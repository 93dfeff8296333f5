import type { Kysely } from 'kysely';
import {
  findInvitationByHash,
  findInvitationById,
  type InvitationRow,
  insertInvitation,
  listOpenInvitations,
  markInvitationAccepted,
  updateInvitation,
} from '../db/repositories/invitations.js';
import { findMembership, findUserByEmail, type UserRow, upsertMembership } from '../db/repositories/users.js';
import type { Database } from '../db/schema.js';
import { apiError } from '../errors/api-error.js';
import { newId } from '../keys/format.js';
import { checkPasswordStrength, verifyPassword } from './password.js';
import { generateSecretToken, hashSecretToken, looksLikeSecretToken } from './secret-token.js';
import { createUser, normaliseEmail, type Role, setUserPassword } from './service.js';

/**
 * Invitations to an account. The inviter (an account owner or an admin) gets a link holding a random token, shown
 * once, and passes it on; whoever opens it sets a password (a new user) or confirms theirs (an existing one) and
 * becomes a member with the invited role. The link names the e-mail address it was made for.
 */

export interface Invitation {
  id: string;
  accountId: string;
  email: string;
  role: Role;
  createdAt: string;
  expiresAt: string;
}

export interface InvitationPreview {
  email: string;
  accountName: string;
  role: Role;
  expiresAt: string;
  /** true: the invitee already has a password and confirms it; false: they choose one. */
  existingUser: boolean;
}

function toInvitation(row: InvitationRow): Invitation {
  return {
    id: row.id,
    accountId: row.account_id,
    email: row.email,
    role: row.role as Role,
    createdAt: new Date(Number(row.created_at)).toISOString(),
    expiresAt: new Date(Number(row.expires_at)).toISOString(),
  };
}

/** The path of the console page that accepts an invitation; the token travels in the fragment, never to a server log. */
export function invitationPath(token: string): string {
  return `/console/invitation#token=${token}`;
}

export async function createInvitation(
  db: Kysely<Database>,
  input: { accountId: string; email: string; role: Role; createdBy: string | null; ttlMs: number },
): Promise<{ token: string; invitation: Invitation }> {
  const email = normaliseEmail(input.email);
  const token = generateSecretToken('invitation');
  const now = Date.now();
  const row: InvitationRow = {
    id: newId('invite'),
    account_id: input.accountId,
    email,
    role: input.role,
    token_hash: hashSecretToken(token),
    created_by: input.createdBy,
    created_at: now,
    expires_at: now + input.ttlMs,
    accepted_at: null,
    revoked_at: null,
  };
  await insertInvitation(db, row);
  return { token, invitation: toInvitation(row) };
}

export async function listInvitations(db: Kysely<Database>, accountId: string): Promise<Invitation[]> {
  return (await listOpenInvitations(db, accountId, Date.now())).map(toInvitation);
}

export async function revokeInvitation(db: Kysely<Database>, accountId: string, invitationId: string): Promise<void> {
  const row = await findInvitationById(db, invitationId);
  if (!row || row.account_id !== accountId) throw apiError('invitation_not_found', `no invitation "${invitationId}"`);
  if (row.revoked_at === null) await updateInvitation(db, row.id, { revoked_at: Date.now() });
}

const unusable = () =>
  apiError('invitation_invalid', 'This invitation link is not valid: it was revoked, already used, or has expired.');

async function requireOpenInvitation(db: Kysely<Database>, token: string) {
  if (!looksLikeSecretToken('invitation', token)) throw unusable();
  const row = await findInvitationByHash(db, hashSecretToken(token));
  if (!row || row.accepted_at !== null || row.revoked_at !== null || Number(row.expires_at) <= Date.now()) {
    throw unusable();
  }
  return row;
}

export async function previewInvitation(db: Kysely<Database>, token: string): Promise<InvitationPreview> {
  const row = await requireOpenInvitation(db, token);
  const user = await findUserByEmail(db, row.email);
  return {
    email: row.email,
    accountName: row.account_name,
    role: row.role as Role,
    expiresAt: new Date(Number(row.expires_at)).toISOString(),
    existingUser: user?.password_hash != null,
  };
}

/**
 * Accepts an invitation: a new user is created with the password given; an existing user must give their current
 * password (so a leaked link cannot be used to join someone else's login to an account). A member keeps a higher
 * role they already hold.
 */
export async function acceptInvitation(db: Kysely<Database>, token: string, password: string): Promise<UserRow> {
  const invitation = await requireOpenInvitation(db, token);
  let user = await findUserByEmail(db, invitation.email);
  if (user?.disabled === 1) throw apiError('user_disabled', 'This user is disabled; ask the operator.');
  if (user?.password_hash != null) {
    if (!(await verifyPassword(password, user.password_hash))) {
      throw apiError('invalid_credentials', 'The password is not correct for this user.');
    }
  } else {
    checkPasswordStrength(password);
    if (user) await setUserPassword(db, user.id, password);
    else await createUser(db, { email: invitation.email, password });
    user = await findUserByEmail(db, invitation.email);
  }
  if (!user) throw apiError('internal_error', 'the invited user vanished');
  const accepted = user;
  await db.transaction().execute(async (transaction) => {
    if (!(await markInvitationAccepted(transaction, invitation.id, Date.now()))) throw unusable();
    const current = await findMembership(transaction, accepted.id, invitation.account_id);
    const role = current?.role === 'owner' ? 'owner' : invitation.role;
    await upsertMembership(transaction, {
      user_id: accepted.id,
      account_id: invitation.account_id,
      role,
      created_at: Date.now(),
    });
  });
  return accepted;
}
