import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Caller } from '../../access/account-access.js';
import { findUserByEmail, listMembershipsOfUser, type UserRow, updateUser } from '../../db/repositories/users.js';
import { type ApiError, apiError } from '../../errors/api-error.js';
import { needsRehash, verifyPassword } from '../../users/password.js';
import { changePassword, describePasswordChange, rehashPassword } from '../../users/password-change.js';
import { normaliseEmail } from '../../users/service.js';
import { createSession, csrfTokenFor, endSession } from '../../users/sessions.js';
import {
  clearSessionCookie,
  clientAddress,
  cookieValues,
  readCookie,
  sessionCookieName,
  setSessionCookie,
} from './cookies.js';
import { defineRoute } from './route.js';
import { type Membership, passwordChangedSchema, type SessionView, sessionSchema } from './schemas.js';
import type { ManagementServices } from './services.js';

/** Signing in and out of the console, the current session, and changing one's own password. */

export async function membershipsOf(services: ManagementServices, userId: string): Promise<Membership[]> {
  return (await listMembershipsOfUser(services.database.db, userId)).map((row) => ({
    accountId: row.account_id,
    accountName: row.account_name,
    role: row.role as Membership['role'],
    accountDisabled: row.account_disabled === 1,
  }));
}

async function sessionView(
  services: ManagementServices,
  user: Pick<UserRow, 'id' | 'email' | 'is_admin'>,
  sessionId: string,
  expiresAt: number,
): Promise<SessionView> {
  return {
    user: { id: user.id, email: user.email, admin: user.is_admin === 1 },
    memberships: await membershipsOf(services, user.id),
    csrfToken: csrfTokenFor(sessionId, services.secret),
    expiresAt: new Date(expiresAt).toISOString(),
    limitDefaults: { account: services.config.limits.accountDefaults, key: services.config.limits.keyDefaults },
  };
}

/**
 * Starts a session for a user whose credentials were just checked: new token, cookie, session view. The session(s)
 * the request's cookie names end here: the browser loses that cookie, and a copy of it elsewhere must not outlive it.
 */
export async function startSession(
  services: ManagementServices,
  request: FastifyRequest,
  reply: FastifyReply,
  user: UserRow,
): Promise<SessionView> {
  const policy = {
    ttlMs: services.config.console.sessionTtlMs,
    idleTimeoutMs: services.config.console.sessionIdleTimeoutMs,
  };
  for (const previous of cookieValues(request, sessionCookieName)) await endSession(services.database.db, previous);
  const { token, session } = await createSession(services.database.db, user.id, policy);
  await updateUser(services.database.db, user.id, { last_sign_in_at: Date.now() });
  setSessionCookie(request, reply, services, token, policy.ttlMs);
  return sessionView(services, user, session.id, Math.min(session.expires_at, Date.now() + policy.idleTimeoutMs));
}

export function tooManyAttempts(retryAfterSeconds: number): ApiError {
  const wait =
    retryAfterSeconds < 120
      ? `${retryAfterSeconds} second${retryAfterSeconds === 1 ? '' : 's'}`
      : `${Math.ceil(retryAfterSeconds / 60)} minutes`;
  return apiError(
    'too_many_sign_in_attempts',
    `Too many failed sign-in attempts from your address. Try again in ${wait}.`,
    { headers: { 'retry-after': String(retryAfterSeconds) } },
  );
}

const invalidCredentials = () => apiError('invalid_credentials', 'The e-mail address or the password is not correct.');

function sessionIdOf(caller: Caller): string {
  if (caller.sessionId === undefined) throw apiError('session_only', 'This needs a console session.');
  return caller.sessionId;
}

export const sessionRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api/session',
    tag: 'Session',
    summary: 'The signed-in user, their accounts, and the CSRF token for state-changing requests',
    auth: 'session',
    access: 'signed-in',
    response: sessionSchema,
    handle: async ({ caller, services }) => {
      const user = { id: caller.userId, email: caller.email, is_admin: caller.admin ? 1 : 0 };
      const session = await services.database.db
        .selectFrom('sessions')
        .select(['expires_at', 'last_seen_at'])
        .where('id', '=', sessionIdOf(caller))
        .executeTakeFirstOrThrow();
      const expiresAt = Math.min(
        Number(session.expires_at),
        Number(session.last_seen_at) + services.config.console.sessionIdleTimeoutMs,
      );
      return sessionView(services, user, sessionIdOf(caller), expiresAt);
    },
  }),

  defineRoute({
    method: 'POST',
    path: '/api/session',
    tag: 'Session',
    summary: 'Sign in with e-mail address and password; sets the session cookie',
    description:
      'Failed attempts are throttled per (client address, e-mail address): after console.sign_in_max_failures, each ' +
      'further attempt from that client must wait twice as long as the one before (429 with retry-after). Attempts ' +
      'from other addresses are not affected. A disabled user gets the same answer as a wrong password. A session ' +
      'the request already had (its cookie) ends when the new one starts.',
    auth: 'public',
    access: 'anyone',
    body: z.strictObject({ email: z.string().max(320), password: z.string().max(4096) }),
    response: sessionSchema,
    handle: async ({ body, services, request, reply }) => {
      const email = normaliseEmail(body.email);
      const address = clientAddress(request, services);
      const throttle = services.signInThrottle;
      // Counted as a failure from here until the password proves right (sign-in-throttle.ts).
      const wait = await throttle.beginAttempt(email, address);
      if (wait > 0) throw tooManyAttempts(wait);
      const user = await findUserByEmail(services.database.db, email);
      const hash = user?.password_hash ?? (await services.decoyPasswordHash);
      const matches = await verifyPassword(body.password, hash);
      // A disabled user is told nothing more than a wrong password would tell: the password is checked all the same.
      if (!user || user.password_hash === null || !matches || user.disabled === 1) {
        services.logger.info({ email, address, disabled: user?.disabled === 1 }, 'console sign-in failed');
        throw invalidCredentials();
      }
      await throttle.attemptSucceeded(email, address);
      if (needsRehash(user.password_hash)) await rehashPassword(services.database.db, user.id, body.password);
      return startSession(services, request, reply, user);
    },
  }),

  defineRoute({
    method: 'DELETE',
    path: '/api/session',
    tag: 'Session',
    summary: 'Sign out: ends the session on the server and clears the cookie',
    auth: 'session',
    access: 'signed-in',
    status: 204,
    handle: async ({ services, request, reply }) => {
      const cookie = readCookie(request, sessionCookieName);
      if (cookie) await endSession(services.database.db, cookie);
      clearSessionCookie(request, reply, services);
    },
  }),

  defineRoute({
    method: 'POST',
    path: '/api/session/password',
    tag: 'Session',
    summary: "Change one's own password; all sessions end (this one is renewed), all tokens are revoked",
    description:
      'Whoever knew the old password may have made a management token with it: all of your tokens stop working, ' +
      'so scripts need new ones. The session making the change is replaced too (a copy of its cookie stops ' +
      'working): the response sets a new session cookie and gives its csrfToken. It says how many other sessions ' +
      'ended and tokens were revoked.',
    auth: 'session',
    access: 'signed-in',
    body: z.strictObject({ currentPassword: z.string().max(4096), newPassword: z.string().max(4096) }),
    response: passwordChangedSchema,
    handle: async ({ caller, body, services, request, reply }) => {
      const db = services.database.db;
      const address = clientAddress(request, services);
      const wait = await services.signInThrottle.beginAttempt(caller.email, address);
      if (wait > 0) throw tooManyAttempts(wait);
      const user = await findUserByEmail(db, caller.email);
      if (!user?.password_hash || !(await verifyPassword(body.currentPassword, user.password_hash))) {
        throw apiError('invalid_credentials', 'The current password is not correct.');
      }
      await services.signInThrottle.attemptSucceeded(caller.email, address);
      // Every session ends, this one included: a copy of this very cookie (often the reason to change a password)
      // must die with the old password. This browser gets a new session, with a new cookie and CSRF token.
      const ended = await changePassword(db, user, body.newPassword);
      const policy = {
        ttlMs: services.config.console.sessionTtlMs,
        idleTimeoutMs: services.config.console.sessionIdleTimeoutMs,
      };
      const { token, session } = await createSession(db, user.id, policy);
      setSessionCookie(request, reply, services, token, policy.ttlMs);
      const changed = { ...ended, sessionsEnded: Math.max(0, ended.sessionsEnded - 1) };
      return {
        ...changed,
        csrfToken: csrfTokenFor(session.id, services.secret),
        message: `Password changed; ${describePasswordChange(changed, 'other sessions')}.`,
      };
    },
  }),
];
