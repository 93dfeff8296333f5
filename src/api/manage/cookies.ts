import type { FastifyReply, FastifyRequest } from 'fastify';
import { apiError } from '../../errors/api-error.js';
import { cameOverTls } from '../../server/security-headers.js';
import type { ManagementServices } from './services.js';

/**
 * The session cookie. HttpOnly (no script can read it), SameSite=Strict (never sent on cross-site requests),
 * Path=/api (only the management API ever receives it), Secure when the console is reached over TLS.
 */

export const sessionCookieName = 'switchboard_session';

/** Every value the Cookie header gives `name`, in the order sent. */
export function cookieValues(request: FastifyRequest, name: string): string[] {
  const header = request.headers.cookie;
  if (!header) return [];
  const values: string[] = [];
  for (const part of header.split(';')) {
    const separator = part.indexOf('=');
    if (separator === -1) continue;
    if (part.slice(0, separator).trim() === name) values.push(part.slice(separator + 1).trim());
  }
  return values;
}

/**
 * The cookie's value. Two of the same name are refused rather than read as the first: a sibling subdomain can set
 * one for the whole domain and a longer path, which the browser then sends first, and a request would run as
 * whoever's session that is (a sign-in forced on the user without a form).
 */
export function readCookie(request: FastifyRequest, name: string): string | undefined {
  const values = cookieValues(request, name);
  if (values.length > 1) {
    throw apiError(
      'ambiguous_session_cookie',
      `The browser sent ${values.length} ${name} cookies; another site under this domain may have set one. Clear ` +
        "this site's cookies and sign in again.",
    );
  }
  return values[0];
}

/** Whether the request reached us over TLS, directly or (only when the proxy is trusted) per X-Forwarded-Proto. */
export function isSecureRequest(request: FastifyRequest, services: ManagementServices): boolean {
  return cameOverTls(request.raw, services.config.console.trustProxy);
}

function secureAttribute(request: FastifyRequest, services: ManagementServices): string {
  const mode = services.config.console.secureCookies;
  const secure = mode === 'always' || (mode === 'auto' && isSecureRequest(request, services));
  return secure ? '; Secure' : '';
}

export function setSessionCookie(
  request: FastifyRequest,
  reply: FastifyReply,
  services: ManagementServices,
  token: string,
  maxAgeMs: number,
): void {
  reply.header(
    'set-cookie',
    `${sessionCookieName}=${token}; Path=/api; HttpOnly; SameSite=Strict; Max-Age=${Math.floor(maxAgeMs / 1000)}${secureAttribute(request, services)}`,
  );
}

export function clearSessionCookie(request: FastifyRequest, reply: FastifyReply, services: ManagementServices): void {
  reply.header(
    'set-cookie',
    `${sessionCookieName}=; Path=/api; HttpOnly; SameSite=Strict; Max-Age=0${secureAttribute(request, services)}`,
  );
}

/** The client's address for rate limiting: the socket's, or the last X-Forwarded-For hop when the proxy is trusted. */
export function clientAddress(request: FastifyRequest, services: ManagementServices): string {
  if (services.config.console.trustProxy) {
    const header = request.headers['x-forwarded-for'];
    const value = Array.isArray(header) ? header.join(',') : header;
    const last = value?.split(',').at(-1)?.trim();
    if (last) return last;
  }
  return request.raw.socket.remoteAddress ?? 'unknown';
}
