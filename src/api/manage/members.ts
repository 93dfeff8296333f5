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
import { startSession, tooManyAttempts } from './session.js';

/**
 * An account's people: members see who else is in; owners (and admins) invite, change roles and remove. Invitations
 * are accepted by whoever holds the link: signed in as the invited address, or with a password (see invitations.ts).
 */

const memberParams = accountParams.extend({ userId: z.string().min(1).max(100) });
const invitationParams = accountParams.extend({ invitationId: z.string().min(1).max(100) });
const invitationToken = z.string().min(1).max(200);
/** The refusals of a password given to accept an invitation, which count as failed sign-ins. */
const passwordRefusals = new Set([
  'invalid_credentials',
  'password_too_short',
  'password_too_weak',
  'password_too_long',
]);

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
      'console.invitation_ttl and can be used once.',
    auth: 'user',
    access: 'account-owner',
    params: accountParams,
    body: z.strictObject({ email: z.string().max(320), role: roleSchema }),
    response: createdInvitationSchema,
    status: 201,
    handle: async ({ caller, params, body, services }) => {
      const db = services.database.db;
      const { account } = await authorizeAccount(db, caller, params.accountId, 'manage-members');
      const { token, invitation } = await createInvitation(db, {
        accountId: account.id,
        email: body.email,
        role: body.role,
        createdBy: caller.userId,
        ttlMs: services.config.console.invitationTtlMs,
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
      "be the login's password when the address has a login, and becomes its password when not (a new login). A " +
      "password that is not the login's is checked for strength either way, so a weak one gets the same 400 " +
      'whether or not the address has a login. A ' +
      "login created by an account owner's invitation is tied to that account until its holder accepts another " +
      'invitation or an operator confirms it. Wrong passwords are throttled like sign-ins.',
    auth: 'public',
    access: 'anyone',
    body: z.strictObject({ token: invitationToken, password: z.string().max(4096).optional() }),
    response: sessionSchema,
    handle: async ({ body, caller, services, request, reply }) => {
      const db = services.database.db;
      if (body.password === undefined) {
        if (caller?.via !== 'session') {
          throw apiError('invalid_request', 'Give a password, or sign in as the invited address first.', {
            param: 'password',
          });
        }
        await acceptInvitation(db, body.token, { signedInUserId: caller.userId });
        const user = await findUserById(db, caller.userId);
        if (!user) throw apiError('user_not_found', 'the invited user no longer exists');
        // The answer carries a fresh session (and CSRF token); startSession ends the one it replaces.
        return startSession(services, request, reply, user);
      }
      const preview = await previewInvitation(db, body.token, undefined);
      const address = clientAddress(request, services);
      // Counted as a failure until the acceptance goes through (sign-in-throttle.ts): it may check a password.
      const wait = await services.signInThrottle.beginAttempt(preview.email, address);
      if (wait > 0) throw tooManyAttempts(wait);
      let accepted: Awaited<ReturnType<typeof acceptInvitation>>;
      try {
        accepted = await acceptInvitation(db, body.token, {
          password: body.password,
          decoyHash: await services.decoyPasswordHash,
        });
      } catch (error) {
        // A wrong password stays counted, and so does a weak one: it may have been a guess at a login's (weak, old)
        // password, and counting it only when the address has a login would tell that it has. Any other refusal (a
        // used link) checked no password.
        if (!passwordRefusals.has((error as { code?: string }).code ?? '')) {
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
