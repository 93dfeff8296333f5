import type { FastifyRequest } from 'fastify';
import type { Caller } from '../../access/account-access.js';
import { apiError } from '../../errors/api-error.js';
import { resolveManagementToken } from '../../users/management-tokens.js';
import { resolveSession } from '../../users/sessions.js';
import { readCookie, sessionCookieName } from './cookies.js';
import type { ManagementServices } from './services.js';

/**
 * Who is calling /api: a management token (`Authorization: Bearer sbm_…`, for scripts) or a console session
 * cookie. A request that sends an Authorization header is judged by it alone, never by a cookie it also carries.
 */
export async function resolveCaller(
  request: FastifyRequest,
  services: ManagementServices,
): Promise<Caller | undefined> {
  const db = services.database.db;
  const authorization = request.headers.authorization;
  if (authorization !== undefined) {
    const match = /^Bearer (\S+)$/.exec(authorization);
    if (!match?.[1]) {
      throw apiError(
        'invalid_token',
        'Malformed Authorization header: use "Authorization: Bearer <management token>".',
      );
    }
    const resolved = await resolveManagementToken(db, match[1]);
    if (!resolved) {
      throw apiError(
        'invalid_token',
        'The management token is not valid (unknown, revoked or expired). Create one in the console under Settings.',
      );
    }
    return {
      userId: resolved.user.id,
      email: resolved.user.email,
      admin: resolved.user.is_admin === 1,
      via: 'token',
      accountScope: resolved.token.account_id,
    };
  }
  const cookie = readCookie(request, sessionCookieName);
  if (cookie === undefined || cookie === '') return undefined;
  const session = await resolveSession(db, cookie, {
    ttlMs: services.config.console.sessionTtlMs,
    idleTimeoutMs: services.config.console.sessionIdleTimeoutMs,
  });
  if (!session) return undefined;
  return {
    userId: session.user.id,
    email: session.user.email,
    admin: session.user.is_admin === 1,
    via: 'session',
    sessionId: session.id,
    accountScope: null,
  };
}

export function notSignedIn() {
  return apiError('not_signed_in', 'You are not signed in, or your session has ended. Sign in again.');
}
