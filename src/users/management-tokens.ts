import type { Kysely } from 'kysely';
import {
  findManagementTokenByHash,
  findManagementTokenById,
  insertManagementToken,
  listManagementTokensOfUser,
  type ManagementTokenRow,
  updateManagementToken,
} from '../db/repositories/management-tokens.js';
import { findUserById, type UserRow } from '../db/repositories/users.js';
import type { Database } from '../db/schema.js';
import { apiError } from '../errors/api-error.js';
import { newId } from '../keys/format.js';
import { displaySecretToken, generateSecretToken, hashSecretToken, looksLikeSecretToken } from './secret-token.js';

/**
 * Management tokens: bearer credentials for scripts that call /api. A token acts as the user who created it (their
 * admin flag and memberships as they are at each request, so removing the user from an account takes effect at
 * once), optionally narrowed to one account. Shown once at creation; only the hash is kept.
 */

export interface ManagementToken {
  id: string;
  name: string;
  display: string;
  /** null: every account the user may act on. */
  accountId: string | null;
  createdAt: string;
  lastUsedAt: string | null;
  expiresAt: string | null;
  revokedAt: string | null;
  status: 'active' | 'expired' | 'revoked';
}

const isoOrNull = (time: number | null): string | null => (time === null ? null : new Date(Number(time)).toISOString());

export function toManagementToken(row: ManagementTokenRow, now = Date.now()): ManagementToken {
  return {
    id: row.id,
    name: row.name,
    display: row.display,
    accountId: row.account_id,
    createdAt: new Date(Number(row.created_at)).toISOString(),
    lastUsedAt: isoOrNull(row.last_used_at),
    expiresAt: isoOrNull(row.expires_at),
    revokedAt: isoOrNull(row.revoked_at),
    status:
      row.revoked_at !== null
        ? 'revoked'
        : row.expires_at !== null && Number(row.expires_at) <= now
          ? 'expired'
          : 'active',
  };
}

export async function createManagementToken(
  db: Kysely<Database>,
  input: { userId: string; name: string; accountId?: string | null | undefined; expiresInMs?: number | undefined },
): Promise<{ token: string; info: ManagementToken }> {
  const name = input.name.trim();
  if (name.length === 0 || name.length > 100)
    throw apiError('invalid_request', 'a token name is 1-100 characters', { param: 'name' });
  if (input.expiresInMs !== undefined && input.expiresInMs <= 0) {
    throw apiError('invalid_request', 'expiry must be in the future', { param: 'expiresInDays' });
  }
  const token = generateSecretToken('management');
  const now = Date.now();
  const row: ManagementTokenRow = {
    id: newId('mtok'),
    user_id: input.userId,
    account_id: input.accountId ?? null,
    name,
    token_hash: hashSecretToken(token),
    display: displaySecretToken(token),
    created_at: now,
    last_used_at: null,
    expires_at: input.expiresInMs === undefined ? null : now + input.expiresInMs,
    revoked_at: null,
  };
  await insertManagementToken(db, row);
  return { token, info: toManagementToken(row, now) };
}

export async function listManagementTokens(db: Kysely<Database>, userId: string): Promise<ManagementToken[]> {
  const now = Date.now();
  return (await listManagementTokensOfUser(db, userId)).map((row) => toManagementToken(row, now));
}

/** Revokes one of the user's own tokens; another user's token is "not found", not "forbidden". */
export async function revokeManagementToken(
  db: Kysely<Database>,
  userId: string,
  tokenId: string,
): Promise<ManagementToken> {
  const row = await findManagementTokenById(db, tokenId);
  if (!row || row.user_id !== userId) throw apiError('token_not_found', `no token with id "${tokenId}"`);
  if (row.revoked_at !== null) return toManagementToken(row);
  const revokedAt = Date.now();
  await updateManagementToken(db, row.id, { revoked_at: revokedAt });
  return toManagementToken({ ...row, revoked_at: revokedAt });
}

/** last_used_at is written at most this often per token. */
const touchIntervalMs = 60_000;

/** The token's row and user when it is valid right now; undefined otherwise. */
export async function resolveManagementToken(
  db: Kysely<Database>,
  token: string,
  now = Date.now(),
): Promise<{ token: ManagementTokenRow; user: UserRow } | undefined> {
  if (!looksLikeSecretToken('management', token)) return undefined;
  const row = await findManagementTokenByHash(db, hashSecretToken(token));
  if (!row || row.revoked_at !== null || (row.expires_at !== null && Number(row.expires_at) <= now)) return undefined;
  const user = await findUserById(db, row.user_id);
  if (!user || user.disabled === 1) return undefined;
  if (row.last_used_at === null || now - Number(row.last_used_at) >= touchIntervalMs) {
    await updateManagementToken(db, row.id, { last_used_at: now });
  }
  return { token: row, user };
}
