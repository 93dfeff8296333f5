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
import {
  findMembership,
  findUserByEmail,
  findUserById,
  lockAccountMembers,
  type UserRow,
  updateUser,
  upsertMembership,
} from '../db/repositories/users.js';
import type { Database } from '../db/schema.js';
import { ApiError, apiError } from '../errors/api-error.js';
import { newId } from '../keys/format.js';
import { refuseLookAlikeEmail } from './look-alike-email.js';
import { checkPasswordStrength, hashPassword, verifyPassword } from './password.js';
import { generateSecretToken, hashSecretToken, looksLikeSecretToken } from './secret-token.js';
import { createUser, normaliseEmail, type Role } from './service.js';

/**
 * Invitations to an account. The inviter (an account owner or an admin) gets a link holding a random token, shown
 * once, and passes it on; whoever opens it joins with the invited role: signed in as the invited address, or with a
 * password (the login's own, or a new one for a new login). The link names the e-mail address it was made for.
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
  /**
   * Whether the caller is signed in as the invited address (they may join without a password). Whether the address
   * has a login at all is not said: the inviter could otherwise probe addresses with invitations.
   */
  signedInAsInvitee: boolean;
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
  input: {
    accountId: string;
    email: string;
    role: Role;
    createdBy: string | null;
    ttlMs: number;
    /** The open invitations the account may have (console.max_pending_invitations); the CLI passes none. */
    maxPending?: number;
  },
): Promise<{ token: string; invitation: Invitation }> {
  const email = normaliseEmail(input.email);
  await refuseLookAlikeEmail(email);
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
  const { maxPending } = input;
  if (maxPending === undefined) {
    await insertInvitation(db, row);
  } else {
    // Counted and inserted under the account's lock: of invitations made at once, no more than the cap are made.
    await db.transaction().execute(async (transaction) => {
      await lockAccountMembers(transaction, input.accountId);
      await requireRoomForInvitation(transaction, input.accountId, maxPending);
      await insertInvitation(transaction, row);
    });
  }
  return { token, invitation: toInvitation(row) };
}

/**
 * Refuses (409) a further invitation to an account that has `maxPending` open ones: those its list shows, so that its
 * owners can revoke what blocks them. The operator's CLI is not held to it. Only createInvitation's own check, under
 * the account's lock, holds against invitations made at once; the route asks first so a refusal spends no budget.
 */
export async function requireRoomForInvitation(
  db: Kysely<Database>,
  accountId: string,
  maxPending: number,
): Promise<void> {
  if ((await listInvitations(db, accountId)).length < maxPending) return;
  throw apiError(
    'too_many_pending_invitations',
    `This account already has ${maxPending} open invitations (console.max_pending_invitations). Revoke the ones ` +
      'nobody will use, or wait until they are accepted or expire, then invite again.',
  );
}

export async function listInvitations(db: Kysely<Database>, accountId: string): Promise<Invitation[]> {
  const open = await listOpenInvitations(db, accountId, Date.now());
  // Asked once per inviter, not per invitation: a few owners make most of an account's invitations.
  const verdicts = new Map<string | null, Promise<boolean>>();
  const valid = await Promise.all(
    open.map((row) => {
      let verdict = verdicts.get(row.created_by);
      if (!verdict) {
        verdict = inviterMayStillInvite(db, row);
        verdicts.set(row.created_by, verdict);
      }
      return verdict;
    }),
  );
  return open.filter((_row, index) => valid[index]).map(toInvitation);
}

/**
 * Whether whoever made an invitation may still invite to its account: the operator (the CLI), an admin, or an owner
 * of the account, not disabled. An owner removed or demoted, or a user disabled, leaves no working invitation behind:
 * one made out to another address of their own would otherwise let them back in.
 */
async function inviterMayStillInvite(db: Kysely<Database>, row: InvitationRow): Promise<boolean> {
  if (row.created_by === null) return true;
  const inviter = await findUserById(db, row.created_by);
  if (!inviter || inviter.disabled === 1) return false;
  if (inviter.is_admin === 1) return true;
  return (await findMembership(db, inviter.id, row.account_id))?.role === 'owner';
}

export async function revokeInvitation(db: Kysely<Database>, accountId: string, invitationId: string): Promise<void> {
  const row = await findInvitationById(db, invitationId);
  if (!row || row.account_id !== accountId) throw apiError('invitation_not_found', `no invitation "${invitationId}"`);
  if (row.revoked_at === null) await updateInvitation(db, row.id, { revoked_at: Date.now() });
}

const unusable = () =>
  apiError(
    'invitation_invalid',
    'This invitation link is not valid: it was revoked, already used, or has expired, or whoever made it may no ' +
      'longer invite people to the account.',
  );

async function requireOpenInvitation(db: Kysely<Database>, token: string) {
  if (!looksLikeSecretToken('invitation', token)) throw unusable();
  const row = await findInvitationByHash(db, hashSecretToken(token));
  if (!row || row.accepted_at !== null || row.revoked_at !== null || Number(row.expires_at) <= Date.now()) {
    throw unusable();
  }
  if (!(await inviterMayStillInvite(db, row))) throw unusable();
  return row;
}

export async function previewInvitation(
  db: Kysely<Database>,
  token: string,
  signedInEmail: string | undefined,
): Promise<InvitationPreview> {
  const row = await requireOpenInvitation(db, token);
  return {
    email: row.email,
    accountName: row.account_name,
    role: row.role as Role,
    expiresAt: new Date(Number(row.expires_at)).toISOString(),
    signedInAsInvitee: signedInEmail === row.email,
  };
}

/**
 * Who accepts: the holder of a console session as the invited address, or whoever gives a password. `decoyHash` is a
 * password hash nobody's password matches, checked when the address has no login (see acceptWithPassword).
 */
export type Acceptance = { signedInUserId: string } | { password: string; decoyHash: string };

const wrongPassword = () =>
  apiError(
    'invalid_credentials',
    'This address already has a login, and that is not its password. Give that password (or sign in with it ' +
      'and open the link again); if it is forgotten, the operator can reset it.',
  );

/**
 * A password that could not become a new login's: the same answer whether or not the address has a login whose
 * password it is not, so it says what to do in either case.
 */
async function requireNewLoginPassword(password: string, email: string): Promise<void> {
  try {
    await checkPasswordStrength(password, { userInputs: [email] });
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    throw new ApiError(
      error.errorCode,
      `${error.message} If this address already has a login, give its password instead (or sign in and open the ` +
        'link again).',
      { param: error.param },
    );
  }
}

/**
 * Accepts an invitation. Signed in as the invited address, nothing more is asked. Otherwise a password: it must be
 * the login's when the address has one (so a leaked link cannot join someone else's login to an account), and it
 * becomes the login's when not. A login created here by an account owner's invitation is tied to that account (see
 * User.createdByInvitation): whoever opened the link chose the password, which proves nothing about the address. Its
 * holder accepting an invitation someone else vouches for unties it: the same person then holds two links sent to the
 * address by two inviters (an operator, or another owner whose own login is not tied). Another invitation from the
 * same inviter proves nothing new. A member keeps a higher role they already hold.
 */
export async function acceptInvitation(db: Kysely<Database>, token: string, acceptance: Acceptance): Promise<UserRow> {
  const invitation = await requireOpenInvitation(db, token);
  const inviter = invitation.created_by === null ? undefined : await findUserById(db, invitation.created_by);
  // An invitation from the CLI (no inviter) or an admin is the operator's.
  const byOperator = invitation.created_by === null || inviter?.is_admin === 1;
  let user = await findUserByEmail(db, invitation.email);
  let passwordChange: Parameters<typeof updateUser>[2] | undefined;
  if ('signedInUserId' in acceptance) {
    if (!user || user.id !== acceptance.signedInUserId) {
      throw apiError(
        'signed_in_as_someone_else',
        `This invitation is for ${invitation.email}; sign out first, or open it where you are signed in as them.`,
      );
    }
  } else {
    // Whether the address has a login must not show (an owner could probe addresses with invitations of their own),
    // neither in the answer nor in its time. A weak password is refused first, alike, before any hash is checked: it
    // is no guess at a login's password, so it need not count as a failed sign-in (a login whose old password is
    // weak joins signed in instead). Then one password is checked (against a decoy hash when there is no login).
    // Only a strong password that is not the login's tells, by being refused rather than making a login: that costs
    // the prober the invitation and, where there was no login, makes one the operator sees was created by their
    // invitation.
    await requireNewLoginPassword(acceptance.password, invitation.email);
    const loginHash = user?.password_hash ?? null;
    const matches = await verifyPassword(acceptance.password, loginHash ?? acceptance.decoyHash);
    // A disabled user learns nothing more than a wrong password would tell.
    const joinsLogin = loginHash !== null && matches && user?.disabled === 0;
    if (loginHash !== null && !joinsLogin) throw wrongPassword();
    if (loginHash === null) {
      // An operator's invitation vouches for the address; an account owner's only for their own account.
      const tiedTo = !byOperator && inviter ? { accountId: invitation.account_id, inviterId: inviter.id } : undefined;
      if (user) {
        // Written with the acceptance itself (below): of two acceptances at once, the one that uses the invitation
        // is the one whose password the login gets.
        passwordChange = {
          password_hash: await hashPassword(acceptance.password),
          password_changed_at: Date.now(),
          ...(tiedTo ? { invitation_account_id: tiedTo.accountId, invitation_inviter_id: tiedTo.inviterId } : {}),
        };
      } else {
        // Of two acceptances at once, the second finds the login created (409 user_exists).
        await createUser(db, { email: invitation.email, password: acceptance.password, tiedTo });
        user = await findUserByEmail(db, invitation.email);
      }
    }
  }
  if (!user) throw apiError('internal_error', 'the invited user vanished');
  const accepted = passwordChange ? { ...user, ...passwordChange } : user;
  const vouchedByAnother =
    byOperator ||
    (inviter !== undefined && inviter.id !== accepted.invitation_inviter_id && inviter.invitation_account_id === null);
  const untie =
    accepted.invitation_account_id !== null &&
    accepted.invitation_account_id !== invitation.account_id &&
    vouchedByAnother;
  await db.transaction().execute(async (transaction) => {
    if (!(await markInvitationAccepted(transaction, invitation.id, Date.now()))) throw unusable();
    if (passwordChange) await updateUser(transaction, accepted.id, passwordChange);
    const current = await findMembership(transaction, accepted.id, invitation.account_id);
    const role = current?.role === 'owner' ? 'owner' : invitation.role;
    await upsertMembership(transaction, {
      user_id: accepted.id,
      account_id: invitation.account_id,
      role,
      created_at: Date.now(),
    });
    if (untie) await updateUser(transaction, accepted.id, { invitation_account_id: null, invitation_inviter_id: null });
  });
  return accepted;
}
