import type { Kysely } from 'kysely';
import { normaliseModelList, requireAccount } from '../accounts/service.js';
import { recordAccessChange } from '../db/repositories/access-changes.js';
import {
  type ApiKeyRow,
  findKeyById,
  insertApiKey,
  listKeysOfAccount,
  updateApiKey,
} from '../db/repositories/api-keys.js';
import type { Database } from '../db/schema.js';
import { apiError } from '../errors/api-error.js';
import { parseStoredLimits, type StoredLimits, validateLimitChange } from '../limits/settings.js';
import { displayForm, generateKey, hashKey, newId } from './format.js';

/** Management operations on keys (CLI and management API). Verification on the hot path is in authenticate.ts. */

export type KeyStatus = 'active' | 'expiring' | 'expired' | 'revoked';

export interface ApiKeyInfo {
  id: string;
  accountId: string;
  name: string;
  environment: string | null;
  display: string;
  /** null: the key may call every model its account may. */
  models: string[] | null;
  status: KeyStatus;
  createdAt: string;
  lastUsedAt: string | null;
  expiresAt: string | null;
  revokedAt: string | null;
  replacedBy: string | null;
  /** Limits set on the key itself; the rest follow limits.key_defaults in the configuration. */
  limits: StoredLimits;
}

const isoOrNull = (time: number | null): string | null => (time === null ? null : new Date(Number(time)).toISOString());

export function keyStatus(row: ApiKeyRow, now = Date.now()): KeyStatus {
  if (row.revoked_at !== null) return 'revoked';
  if (row.expires_at !== null && Number(row.expires_at) <= now) return 'expired';
  if (row.replaced_by !== null) return 'expiring';
  return 'active';
}

export function toKeyInfo(row: ApiKeyRow, now = Date.now()): ApiKeyInfo {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    environment: row.environment,
    display: row.display,
    models: row.allowed_models === null ? null : (JSON.parse(row.allowed_models) as string[]),
    status: keyStatus(row, now),
    createdAt: new Date(Number(row.created_at)).toISOString(),
    lastUsedAt: isoOrNull(row.last_used_at),
    expiresAt: isoOrNull(row.expires_at),
    revokedAt: isoOrNull(row.revoked_at),
    replacedBy: row.replaced_by,
    limits: parseStoredLimits(row.limits),
  };
}

export interface CreateKeyInput {
  account: string;
  name: string;
  environment?: string | undefined;
  models?: readonly string[] | undefined;
  expiresInMs?: number | undefined;
}

/** The plaintext key is returned here and nowhere else, ever. */
export interface CreatedKey {
  key: string;
  info: ApiKeyInfo;
}

function validateKeyName(name: string): void {
  if (name.trim().length === 0 || name.length > 100) {
    throw apiError(
      'invalid_request',
      'a key name is 1-100 characters, e.g. the application and environment it serves',
      { param: 'name' },
    );
  }
}

function buildKeyRow(
  secret: Buffer,
  accountId: string,
  input: Omit<CreateKeyInput, 'account'> & { limits?: string | null },
  now: number,
) {
  const key = generateKey();
  const row: ApiKeyRow = {
    id: newId('key'),
    account_id: accountId,
    name: input.name.trim(),
    environment: input.environment?.trim() || null,
    hmac: hashKey(key, secret),
    display: displayForm(key),
    allowed_models: input.models === undefined ? null : JSON.stringify(normaliseModelList(input.models)),
    created_at: now,
    last_used_at: null,
    expires_at: input.expiresInMs === undefined ? null : now + input.expiresInMs,
    revoked_at: null,
    replaced_by: null,
    limits: input.limits ?? null,
  };
  return { key, row };
}

export async function createKey(db: Kysely<Database>, secret: Buffer, input: CreateKeyInput): Promise<CreatedKey> {
  validateKeyName(input.name);
  if (input.expiresInMs !== undefined && input.expiresInMs <= 0) {
    throw apiError('invalid_request', 'expiry must be in the future', { param: 'expires_in' });
  }
  const account = await requireAccount(db, input.account);
  const now = Date.now();
  const { key, row } = buildKeyRow(secret, account.id, input, now);
  await db.transaction().execute(async (transaction) => {
    await insertApiKey(transaction, row);
    // Servers may hold a negative cache entry for this hash (someone probing); the change clears it.
    await recordAccessChange(transaction, 'key_created', row.id);
  });
  return { key, info: toKeyInfo(row, now) };
}

export async function listKeys(db: Kysely<Database>, account: string): Promise<ApiKeyInfo[]> {
  const row = await requireAccount(db, account);
  const now = Date.now();
  return (await listKeysOfAccount(db, row.id)).map((key) => toKeyInfo(key, now));
}

async function requireKey(db: Kysely<Database>, keyId: string): Promise<ApiKeyRow> {
  const row = await findKeyById(db, keyId);
  if (!row) throw apiError('key_not_found', `no key with id "${keyId}"`);
  return row;
}

/** Revokes at once; idempotent (a revoked key stays revoked with its original time). */
export async function revokeKey(db: Kysely<Database>, keyId: string): Promise<ApiKeyInfo> {
  const row = await requireKey(db, keyId);
  if (row.revoked_at !== null) return toKeyInfo(row);
  const revokedAt = Date.now();
  await db.transaction().execute(async (transaction) => {
    await updateApiKey(transaction, row.id, { revoked_at: revokedAt });
    await recordAccessChange(transaction, 'key_revoked', row.id);
  });
  return toKeyInfo({ ...row, revoked_at: revokedAt });
}

/**
 * Issues a successor with the same account, name, environment and models, and lets the old key live for the grace
 * period (0 = it stops now). An exposed key should be rotated with no grace.
 */
export async function rotateKey(
  db: Kysely<Database>,
  secret: Buffer,
  keyId: string,
  graceMs: number,
): Promise<{ created: CreatedKey; previous: ApiKeyInfo }> {
  const old = await requireKey(db, keyId);
  const now = Date.now();
  if (keyStatus(old, now) === 'revoked' || keyStatus(old, now) === 'expired') {
    throw apiError('key_inactive', `key ${keyId} is ${keyStatus(old, now)}; create a new key instead`, {
      param: 'key_id',
    });
  }
  const remainingLifetime = old.expires_at === null ? undefined : Number(old.expires_at) - now;
  const { key, row } = buildKeyRow(
    secret,
    old.account_id,
    {
      name: old.name,
      environment: old.environment ?? undefined,
      models: old.allowed_models === null ? undefined : (JSON.parse(old.allowed_models) as string[]),
      // Rotation replaces the secret, not the policy: a key that was going to expire still expires.
      expiresInMs: remainingLifetime,
      limits: old.limits,
    },
    now,
  );
  const graceEnd = now + Math.max(0, graceMs);
  const oldExpiry = old.expires_at === null ? graceEnd : Math.min(Number(old.expires_at), graceEnd);
  await db.transaction().execute(async (transaction) => {
    await insertApiKey(transaction, row);
    await updateApiKey(transaction, old.id, { expires_at: oldExpiry, replaced_by: row.id });
    await recordAccessChange(transaction, 'key_rotated', old.id);
  });
  return {
    created: { key, info: toKeyInfo(row, now) },
    previous: toKeyInfo({ ...old, expires_at: oldExpiry, replaced_by: row.id }, now),
  };
}

/** Changes some limits of a key (null removes one, even a configured default; fields not given stay). */
export async function setKeyLimits(
  db: Kysely<Database>,
  keyId: string,
  change: Record<string, unknown>,
): Promise<ApiKeyInfo> {
  const row = await requireKey(db, keyId);
  const limits = JSON.stringify({ ...parseStoredLimits(row.limits), ...validateLimitChange(change) });
  await db.transaction().execute(async (transaction) => {
    await updateApiKey(transaction, row.id, { limits });
    await recordAccessChange(transaction, 'key_changed', row.id);
  });
  return toKeyInfo({ ...row, limits });
}
