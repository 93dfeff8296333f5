import type { Kysely } from 'kysely';
import { normaliseModelList, requireAccount } from '../accounts/service.js';
import { recordAccessChange } from '../db/repositories/access-changes.js';
import {
  type ApiKeyRow,
  findKeyById,
  findKeyRowByHmac,
  insertApiKey,
  listKeysOfAccount,
  markKeyReplaced,
  updateApiKey,
} from '../db/repositories/api-keys.js';
import type { Database } from '../db/schema.js';
import { apiError } from '../errors/api-error.js';
import {
  applyKeyLimitChange,
  keyLimitState,
  type LimitSetter,
  type LimitSetters,
  parseLimitSetters,
} from '../limits/key-limits.js';
import {
  type LimitSettings,
  noLimits,
  parseStoredLimits,
  type StoredLimits,
  validateLimitChange,
} from '../limits/settings.js';
import { displayForm, generateKey, hashKey, isWellFormedKey, keyPrefix, newId } from './format.js';

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
  /** The limits an operator set on the key: an account owner may tighten them, not loosen them. */
  operatorLimits: StoredLimits;
  /** Who set each limit in `limits` last. */
  limitsSetBy: LimitSetters;
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
    operatorLimits: parseStoredLimits(row.operator_limits),
    limitsSetBy: parseLimitSetters(row.limits_set_by),
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

/**
 * The longest lifetime or rotation grace period a key can be given. Beyond JavaScript's last representable date an
 * expiry cannot be printed, so a key stored with one would break every listing of its account.
 */
export const longestKeyLifetimeMs = 100 * 365 * 86_400_000;

function validateLifetime(milliseconds: number | undefined, what: string, param: string): void {
  if (milliseconds !== undefined && !(milliseconds <= longestKeyLifetimeMs)) {
    throw apiError('invalid_request', `${what} is at most 100 years (36500d)`, { param });
  }
}

/** Newlines, tabs and terminal escapes: a name holding one breaks the CLI's tables and can repaint a terminal. */
const controlCharacter = /\p{Cc}/u;

function validateKeyName(name: string): void {
  if (name.trim().length === 0 || name.length > 100 || controlCharacter.test(name)) {
    throw apiError(
      'invalid_request',
      'a key name is 1-100 characters, none of them control characters (newlines, tabs, escapes), e.g. the application and environment it serves',
      { param: 'name' },
    );
  }
}

function validateEnvironment(environment: string | undefined): void {
  if (environment !== undefined && (environment.length > 50 || controlCharacter.test(environment))) {
    throw apiError(
      'invalid_request',
      'an environment label is at most 50 characters, none of them control characters, e.g. production',
      { param: 'environment' },
    );
  }
}

function buildKeyRow(
  secret: Buffer,
  accountId: string,
  input: Omit<CreateKeyInput, 'account'> & {
    limitsOf?: Pick<ApiKeyRow, 'limits' | 'operator_limits' | 'limits_set_by'>;
  },
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
    limits: input.limitsOf?.limits ?? null,
    operator_limits: input.limitsOf?.operator_limits ?? null,
    limits_set_by: input.limitsOf?.limits_set_by ?? null,
  };
  return { key, row };
}

export async function createKey(db: Kysely<Database>, secret: Buffer, input: CreateKeyInput): Promise<CreatedKey> {
  validateKeyName(input.name);
  validateEnvironment(input.environment);
  if (input.expiresInMs !== undefined && input.expiresInMs <= 0) {
    throw apiError('invalid_request', 'expiry must be in the future', { param: 'expires_in' });
  }
  validateLifetime(input.expiresInMs, 'a key lifetime (omit it for a key that never expires)', 'expires_in');
  const account = await requireAccount(db, input.account);
  const now = Date.now();
  const { key, row } = buildKeyRow(secret, account.id, input, now);
  const write = async (transaction: Kysely<Database>) => {
    await insertApiKey(transaction, row);
    // Servers may hold a negative cache entry for this hash (someone probing); the change clears it.
    await recordAccessChange(transaction, 'key_created', row.id);
  };
  // Inside a caller's transaction (the first run creates an account and its key as one), that one is used.
  if (db.isTransaction) await write(db);
  else await db.transaction().execute(write);
  return { key, info: toKeyInfo(row, now) };
}

export async function listKeys(db: Kysely<Database>, account: string): Promise<ApiKeyInfo[]> {
  const row = await requireAccount(db, account);
  const now = Date.now();
  return (await listKeysOfAccount(db, row.id)).map((key) => toKeyInfo(key, now));
}

async function requireKey(db: Kysely<Database>, keyId: string): Promise<ApiKeyRow> {
  const row = await findKeyById(db, keyId);
  // Something that looks like a key (a typo in a pasted one) is never echoed.
  if (!row) throw apiError('key_not_found', `no key with id "${keyId.startsWith(keyPrefix) ? '(hidden)' : keyId}"`);
  return row;
}

/**
 * The row of a key given by its value (a leaked key is what its finder has, not its id); undefined when the text is
 * not a well-formed Switchboard key or not one of this gateway's. The value is only hashed, never stored or echoed.
 */
export async function findKeyByValue(
  db: Kysely<Database>,
  secret: Buffer,
  value: string,
): Promise<ApiKeyRow | undefined> {
  const key = value.trim();
  if (!isWellFormedKey(key)) return undefined;
  return findKeyRowByHmac(db, hashKey(key, secret));
}

/** A key by its id or by its value (for revocation, wherever an id is accepted); 404 otherwise, never echoing a key. */
export async function requireKeyByIdOrValue(
  db: Kysely<Database>,
  secret: Buffer,
  idOrValue: string,
): Promise<ApiKeyRow> {
  if (!idOrValue.trim().startsWith(keyPrefix)) return requireKey(db, idOrValue);
  const row = await findKeyByValue(db, secret, idOrValue);
  if (row) return row;
  throw apiError(
    'key_not_found',
    isWellFormedKey(idOrValue.trim())
      ? "That key is not one of this gateway's keys (or was made with another server secret)."
      : 'That is not a complete Switchboard key: its checksum does not match (check for a typo or a cut-off copy).',
  );
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
  validateLifetime(graceMs, 'a grace period', 'grace');
  const old = await requireKey(db, keyId);
  const now = Date.now();
  if (keyStatus(old, now) === 'revoked' || keyStatus(old, now) === 'expired') {
    throw apiError('key_inactive', `key ${keyId} is ${keyStatus(old, now)}; create a new key instead`, {
      param: 'key_id',
    });
  }
  const alreadyRotated = (successor: string | null) =>
    apiError(
      'key_already_rotated',
      `key ${keyId} was already rotated${successor ? ` (its successor is ${successor})` : ''}; rotate the successor, or revoke this key to end its grace period now`,
      { param: 'key_id' },
    );
  if (old.replaced_by !== null) throw alreadyRotated(old.replaced_by);
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
      limitsOf: old,
    },
    now,
  );
  const graceEnd = now + Math.max(0, graceMs);
  const oldExpiry = old.expires_at === null ? graceEnd : Math.min(Number(old.expires_at), graceEnd);
  await db.transaction().execute(async (transaction) => {
    await insertApiKey(transaction, row);
    // Rotated by a concurrent request since it was read: this successor is rolled back with the transaction.
    if (!(await markKeyReplaced(transaction, old.id, { expires_at: oldExpiry, replaced_by: row.id }))) {
      throw alreadyRotated((await findKeyById(transaction, old.id))?.replaced_by ?? null);
    }
    await recordAccessChange(transaction, 'key_rotated', old.id);
  });
  return {
    created: { key, info: toKeyInfo(row, now) },
    previous: toKeyInfo({ ...old, expires_at: oldExpiry, replaced_by: row.id }, now),
  };
}

/**
 * Changes some limits of a key (null removes one, even a configured default; fields not given stay), as an operator
 * or as an account owner, who may only tighten what an operator set (see limits/key-limits.ts).
 */
export async function setKeyLimits(
  db: Kysely<Database>,
  keyId: string,
  change: Record<string, unknown>,
  options: { by?: LimitSetter; keyDefaults?: LimitSettings } = {},
): Promise<ApiKeyInfo> {
  const row = await requireKey(db, keyId);
  const next = applyKeyLimitChange(
    keyLimitState(row),
    validateLimitChange(change),
    options.by ?? { role: 'operator', userId: null },
    options.keyDefaults ?? noLimits,
  );
  const changes = {
    limits: JSON.stringify(next.limits),
    operator_limits: JSON.stringify(next.operatorLimits),
    limits_set_by: JSON.stringify(next.setters),
  };
  await db.transaction().execute(async (transaction) => {
    await updateApiKey(transaction, row.id, changes);
    await recordAccessChange(transaction, 'key_changed', row.id);
  });
  return toKeyInfo({ ...row, ...changes });
}
