import { z } from 'zod';
import { authorizeAccount } from '../../access/account-access.js';
import { findUserById } from '../../db/repositories/users.js';
import { apiError } from '../../errors/api-error.js';
import {
  acceptInvitation,
  createInvitation,
  invitationPath,
  listInvitations,
  previewInvitation,
  requireRoomForInvitation,
  revokeInvitation,
} from '../../users/invitations.js';
import { listMembers, removeMember, setMemberRole } from '../../users/service.js';
import { clientAddress } from './cookies.js';
import { defineRoute } from './route.js';
import {
  accountParams,
  createdInvitationSchema,
  invitationPreviewSchema,
  invitationSchema,
  memberSchema,
  roleSchema,
  sessionSchema,
} from './schemas.js';
import type { ManagementServices } from './services.js';
import { startSession, tooManyAttempts } from './session.js';

/**
 * An account's people: members see who else is in; owners (and admins) invite, change roles and remove. Invitations
 * are accepted by whoever holds the link: signed in as the invited address, or with a password (see invitations.ts).
 */

const memberParams = accountParams.extend({ userId: z.string().min(1).max(100) });
const invitationParams = accountParams.extend({ invitationId: z.string().min(1).max(100) });
const invitationToken = z.string().min(1).max(200);
/** The refusals of an acceptance that count as failed sign-ins: a wrong password, a link that does not work. */
const countedRefusals = new Set(['invalid_credentials', 'invitation_invalid']);
/** What a link that does not work is counted against: no address is known, so the client's own budget. */
const unusableLinkSubject = 'unusable invitation link';

/**
 * Runs a step that looks up an invitation link; a link that does not work (unknown, revoked, used, expired) counts
 * as a failed sign-in of the client, so links cannot be tried without limit, and past the client's budget the answer
 * is 429 rather than whether the link works.
 */
async function countingUnusableLinks<Result>(
  services: ManagementServices,
  address: string,
  step: () => Promise<Result>,
): Promise<Result> {
  try {
    return await step();
  } catch (error) {
    if ((error as { code?: string }).code === 'invitation_invalid') {
      const wait = await services.signInThrottle.beginAttempt(unusableLinkSubject, address);
      if (wait > 0) throw tooManyAttempts(wait);
    }
    throw error;
  }
}

function tooManyInvitations(retryAfterSeconds: number) {
  const wait =
    retryAfterSeconds < 120 ? `${retryAfterSeconds} seconds` : `${Math.ceil(retryAfterSeconds / 60)} minutes`;
  return apiError(
    'too_many_invitations',
    `You, or this account, made as many invitations lately as the gateway allows. Try again in ${wait}, or ask ` +
      'the operator (console.invitation_limit_per_user, console.invitation_limit_per_account).',
    { headers: { 'retry-after': String(retryAfterSeconds) } },
  );
}

export const memberRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api/accounts/:accountId/members',
    tag: 'Members',
    summary: "The account's members and their roles",
    auth: 'user',
    access: 'account-member',
    params: accountParams,
    response: z.array(memberSchema),
    handle: async ({ caller, params, services }) => {
      const { account } = await authorizeAccount(services.database.db, caller, params.accountId, 'read');
      return listMembers(services.database.db, account.id);
    },
  }),

  defineRoute({
    method: 'PATCH',
    path: '/api/accounts/:accountId/members/:userId',
    tag: 'Members',
    summary: "Change a member's role (owners); the last owner cannot be demoted",
    auth: 'user',
    access: 'account-owner',
    params: memberParams,
    body: z.strictObject({ role: roleSchema }),
    response: memberSchema,
    handle: async ({ caller, params, body, services }) => {
      const db = services.database.db;
      const { account } = await authorizeAccount(db, caller, params.accountId, 'manage-members');
      await setMemberRole(db, account.id, params.userId, body.role);
      const member = (await listMembers(db, account.id)).find((candidate) => candidate.userId === params.userId);
      if (!member) throw apiError('member_not_found', 'no such member of this account');
      return member;
    },
  }),

  defineRoute({
    method: 'DELETE',
    path: '/api/accounts/:accountId/members/:userId',
    tag: 'Members',
    summary: 'Remove a member from the account (owners); the last owner cannot be removed',
    auth: 'user',
    access: 'account-owner',
    params: memberParams,
    status: 204,
    handle: async ({ caller, params, services }) => {
      const db = services.database.db;
      const { account } = await authorizeAccount(db, caller, params.accountId, 'manage-members');
      await removeMember(db, account.id, params.userId);
    },
  }),

  defineRoute({
    method: 'GET',
    path: '/api/accounts/:accountId/invitations',
    tag: 'Members',
    summary: 'Invitations that can still be accepted (owners)',
    auth: 'user',
    access: 'account-owner',
    params: accountParams,
    response: z.array(invitationSchema),
    handle: async ({ caller, params, services }) => {
      const { account } = await authorizeAccount(services.database.db, caller, params.accountId, 'manage-members');
      return listInvitations(services.database.db, account.id);
    },
  }),

  defineRoute({
    method: 'POST',
    path: '/api/accounts/:accountId/invitations',
    tag: 'Members',
    summary: 'Invite someone by e-mail address with a role (owners); returns the link once',
    description:
      'Switchboard sends no e-mail: pass the link (console origin + path) to the person. It is valid for ' +
      'console.invitation_ttl and can be used once. Past console.invitation_limit_per_user or ' +
      'console.invitation_limit_per_account invitations in console.invitation_limit_window: 429 ' +
      'too_many_invitations with retry-after; with console.max_pending_invitations open: 409 ' +
      'too_many_pending_invitations.',
    auth: 'user',
    access: 'account-owner',
    params: accountParams,
    body: z.strictObject({ email: z.string().max(320), role: roleSchema }),
    response: createdInvitationSchema,
    status: 201,
    handle: async ({ caller, params, body, services }) => {
      const db = services.database.db;
      const { account } = await authorizeAccount(db, caller, params.accountId, 'manage-members');
      // The open invitations first: a refusal there spends nothing of the caller's budget.
      await requireRoomForInvitation(db, account.id, services.config.console.maxPendingInvitations);
      const wait = await services.invitationLimit.consume(account.id, caller.userId);
      if (wait > 0) throw tooManyInvitations(wait);
      const { token, invitation } = await createInvitation(db, {
        accountId: account.id,
        email: body.email,
        role: body.role,
        createdBy: caller.userId,
        ttlMs: services.config.console.invitationTtlMs,
        maxPending: services.config.console.maxPendingInvitations,
      });
      return { ...invitation, token, path: invitationPath(token) };
    },
  }),

  defineRoute({
    method: 'DELETE',
    path: '/api/accounts/:accountId/invitations/:invitationId',
    tag: 'Members',
    summary: 'Revoke an invitation (owners)',
    auth: 'user',
    access: 'account-owner',
    params: invitationParams,
    status: 204,
    handle: async ({ caller, params, services }) => {
      const db = services.database.db;
      const { account } = await authorizeAccount(db, caller, params.accountId, 'manage-members');
      await revokeInvitation(db, account.id, params.invitationId);
    },
  }),

  defineRoute({
    method: 'POST',
    path: '/api/invitations/preview',
    tag: 'Members',
    summary: 'What an invitation link is for (account, role, address), before accepting it',
    description:
      'The token travels in a POST body rather than the URL, so it never lands in access logs. The preview does ' +
      'not say whether the address already has a login: it says only whether the caller is signed in as it.',
    auth: 'public',
    access: 'anyone',
    body: z.strictObject({ token: invitationToken }),
    response: invitationPreviewSchema,
    handle: async ({ body, caller, services }) => previewInvitation(services.database.db, body.token, caller?.email),
  }),

  defineRoute({
    method: 'POST',
    path: '/api/invitations/accept',
    tag: 'Members',
    summary: 'Accept an invitation: signed in as the invited address, or with a password; signs in',
    description:
      'Without a password the caller must be signed in (console session) as the invited address. With one, it must ' +
      "be the login's password when the address has a login, and becomes its password when not (a new login). " +
      'Every password is checked for strength first, so a weak one gets the same 400 whether or not the address ' +
      'has a login, before any hash is checked. A ' +
      "login created by an account owner's invitation is tied to that account until its holder accepts another " +
      'invitation or an operator confirms it. Wrong passwords, and links that do not work, are throttled like ' +
      'sign-ins; a password refused for its strength is checked against no login and is not counted.',
    auth: 'public',
    access: 'anyone',
    body: z.strictObject({ token: invitationToken, password: z.string().max(4096).optional() }),
    response: sessionSchema,
    handle: async ({ body, caller, services, request, reply }) => {
      const db = services.database.db;
      const address = clientAddress(request, services);
      if (body.password === undefined) {
        if (caller?.via !== 'session') {
          throw apiError('invalid_request', 'Give a password, or sign in as the invited address first.', {
            param: 'password',
          });
        }
        await countingUnusableLinks(services, address, () =>
          acceptInvitation(db, body.token, { signedInUserId: caller.userId }),
        );
        const user = await findUserById(db, caller.userId);
        if (!user) throw apiError('user_not_found', 'the invited user no longer exists');
        // The answer carries a fresh session (and CSRF token); startSession ends the one it replaces.
        return startSession(services, request, reply, user);
      }
      const password = body.password;
      const preview = await countingUnusableLinks(services, address, () =>
        previewInvitation(db, body.token, undefined),
      );
      // Counted as a failure until the acceptance goes through (sign-in-throttle.ts): it may check a password.
      const wait = await services.signInThrottle.beginAttempt(preview.email, address);
      if (wait > 0) throw tooManyAttempts(wait);
      let accepted: Awaited<ReturnType<typeof acceptInvitation>>;
      try {
        accepted = await acceptInvitation(db, body.token, { password, decoyHash: await services.decoyPasswordHash });
      } catch (error) {
        // A wrong password stays counted, and so does a link used up meanwhile. A password refused for its strength
        // was checked against no login (acceptInvitation refuses it first): the invitee's typing, not a guess.
        if (!countedRefusals.has((error as { code?: string }).code ?? '')) {
          await services.signInThrottle.withdrawAttempt(preview.email, address);
        }
        throw error;
      }
      await services.signInThrottle.attemptSucceeded(preview.email, address);
      const user = await findUserById(db, accepted.id);
      if (!user) throw apiError('user_not_found', 'the invited user no longer exists');
      return startSession(services, request, reply, user);
    },
  }),
];
