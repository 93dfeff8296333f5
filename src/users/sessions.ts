import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import {
  deleteExpiredSessions,
  deleteSession,
  findSession,
  insertSession,
  type SessionRow,
  touchSession,
} from '../db/repositories/sessions.js';
import { findUserById, type UserRow } from '../db/repositories/users.js';
import type { Database } from '../db/schema.js';
import { generateSecretToken, hashSecretToken, looksLikeSecretToken } from './secret-token.js';

/**
 * Server-side console sessions. The browser holds a random token in an HttpOnly cookie; the database holds its
 * SHA-256, the user, and two clocks: an absolute end (sessionTtlMs after sign-in) and an idle end (sessionIdleMs
 * after the last request). Signing out deletes the row, so a copied cookie dies with it.
 */

export interface SessionPolicy {
  ttlMs: number;
  idleTimeoutMs: number;
}

export interface ActiveSession {
  id: string;
  user: UserRow;
  expiresAt: number;
}

/** last_seen_at is written at most this often, so browsing the console does not turn every read into a write. */
const touchIntervalMs = 60_000;

export async function createSession(
  db: Kysely<Database>,
  userId: string,
  policy: SessionPolicy,
): Promise<{ token: string; session: SessionRow }> {
  const token = generateSecretToken('session');
  const now = Date.now();
  const session: SessionRow = {
    id: hashSecretToken(token),
    user_id: userId,
    created_at: now,
    last_seen_at: now,
    expires_at: now + policy.ttlMs,
  };
  await insertSession(db, session);
  return { token, session };
}

/** The live session for a cookie value, or undefined (unknown, expired, idle too long, or user disabled). */
export async function resolveSession(
  db: Kysely<Database>,
  token: string,
  policy: SessionPolicy,
  now = Date.now(),
): Promise<ActiveSession | undefined> {
  if (!looksLikeSecretToken('session', token)) return undefined;
  const id = hashSecretToken(token);
  const session = await findSession(db, id);
  if (!session) return undefined;
  if (Number(session.expires_at) <= now || Number(session.last_seen_at) + policy.idleTimeoutMs <= now) {
    await deleteSession(db, id);
    return undefined;
  }
  const user = await findUserById(db, session.user_id);
  if (!user || user.disabled === 1) return undefined;
  // Touch often enough that an active session never idles out between two touches.
  if (now - Number(session.last_seen_at) >= Math.min(touchIntervalMs, policy.idleTimeoutMs / 4)) {
    await touchSession(db, id, now);
  }
  return { id, user, expiresAt: Math.min(Number(session.expires_at), now + policy.idleTimeoutMs) };
}

export async function endSession(db: Kysely<Database>, token: string): Promise<void> {
  if (looksLikeSecretToken('session', token)) await deleteSession(db, hashSecretToken(token));
}

/**
 * The CSRF token of a session: an HMAC of the session id under the server secret. It is not stored anywhere, a page
 * gets it from GET /api/session (readable only by same-origin script), and it must come back in the x-csrf-token
 * header of every state-changing request made with the session cookie.
 */
export function csrfTokenFor(sessionId: string, secret: Buffer): string {
  return createHmac('sha256', secret).update(`csrf:${sessionId}`).digest('base64url');
}

export function isValidCsrfToken(sessionId: string, secret: Buffer, presented: string | undefined): boolean {
  if (presented === undefined) return false;
  const expected = Buffer.from(csrfTokenFor(sessionId, secret));
  const given = Buffer.from(presented);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** Deletes ended sessions now and then (an ended session is refused anyway; this only keeps the table small). */
export function startSessionSweeper(
  db: Kysely<Database>,
  intervalMs: number,
  onError: (error: unknown) => void,
): { close(): void } {
  const timer = setInterval(() => {
    deleteExpiredSessions(db, Date.now()).catch(onError);
  }, intervalMs);
  timer.unref();
  return { close: () => clearInterval(timer) };
}
