import type { Kysely } from 'kysely';
import { recordAccessChange } from '../db/repositories/access-changes.js';
import {
  type AccountRow,
  findAccountById,
  findAccountByName,
  insertAccount,
  listAccounts,
  updateAccount,
} from '../db/repositories/accounts.js';
import type { Database } from '../db/schema.js';
import { isUniqueViolation } from '../db/unique-violation.js';
import { apiError } from '../errors/api-error.js';
import { newId } from '../keys/format.js';
import { parseStoredLimits, type StoredLimits, validateLimitChange } from '../limits/settings.js';

/** An account as the CLI and the management API present it. */
export interface Account {
  id: string;
  name: string;
  /** Model names this account may call; ["*"] means every configured model. */
  models: string[];
  disabled: boolean;
  logBodies: boolean;
  /** Limits set on the account itself; limits not set here follow limits.account_defaults in the configuration. */
  limits: StoredLimits;
  createdAt: string;
}

export function toAccount(row: AccountRow): Account {
  return {
    id: row.id,
    name: row.name,
    models: JSON.parse(row.allowed_models) as string[],
    disabled: row.disabled === 1,
    logBodies: row.log_bodies === 1,
    limits: parseStoredLimits(row.limits),
    createdAt: new Date(Number(row.created_at)).toISOString(),
  };
}

const accountNamePattern = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** Normalises a model list given by an operator: trimmed, de-duplicated; "*" alone means all models. */
export function normaliseModelList(models: readonly string[], param = 'models'): string[] {
  const cleaned = [...new Set(models.map((model) => model.trim()).filter((model) => model.length > 0))];
  if (cleaned.includes('*')) return ['*'];
  for (const model of cleaned) {
    if (model.length > 256)
      throw apiError('invalid_request', `model name too long: "${model.slice(0, 32)}…"`, { param });
  }
  return cleaned;
}

export async function createAccount(
  db: Kysely<Database>,
  input: { name: string; models?: readonly string[] | undefined },
): Promise<Account> {
  if (!accountNamePattern.test(input.name)) {
    throw apiError(
      'invalid_request',
      'account names are 1-64 characters: letters, digits, ".", "_" and "-", starting with a letter or digit',
      { param: 'name' },
    );
  }
  const exists = () => apiError('account_exists', `an account named "${input.name}" already exists`);
  if (await findAccountByName(db, input.name)) throw exists();
  const row: AccountRow = {
    id: newId('acct'),
    name: input.name,
    allowed_models: JSON.stringify(normaliseModelList(input.models ?? ['*'])),
    disabled: 0,
    log_bodies: 0,
    created_at: Date.now(),
    limits: null,
  };
  try {
    await insertAccount(db, row);
  } catch (error) {
    // Created by a concurrent request since the check above.
    if (isUniqueViolation(error)) throw exists();
    throw error;
  }
  return toAccount(row);
}

/** Finds an account by name or id; throws a 404 naming what was asked for. */
export async function requireAccount(db: Kysely<Database>, nameOrId: string): Promise<AccountRow> {
  const row = (await findAccountByName(db, nameOrId)) ?? (await findAccountById(db, nameOrId));
  if (!row) throw apiError('account_not_found', `no account named "${nameOrId}"`);
  return row;
}

export async function listAllAccounts(db: Kysely<Database>): Promise<Account[]> {
  return (await listAccounts(db)).map(toAccount);
}

export async function setAccountModels(
  db: Kysely<Database>,
  nameOrId: string,
  models: readonly string[],
): Promise<Account> {
  const row = await requireAccount(db, nameOrId);
  const allowed = JSON.stringify(normaliseModelList(models));
  await db.transaction().execute(async (transaction) => {
    await updateAccount(transaction, row.id, { allowed_models: allowed });
    await recordAccessChange(transaction, 'account_changed', row.id);
  });
  return toAccount({ ...row, allowed_models: allowed });
}

export async function setAccountFlags(
  db: Kysely<Database>,
  nameOrId: string,
  flags: { disabled?: boolean | undefined; logBodies?: boolean | undefined },
): Promise<Account> {
  const row = await requireAccount(db, nameOrId);
  const changes: Partial<Pick<AccountRow, 'disabled' | 'log_bodies' | 'limits'>> = {};
  if (flags.disabled !== undefined) changes.disabled = flags.disabled ? 1 : 0;
  if (flags.logBodies !== undefined) changes.log_bodies = flags.logBodies ? 1 : 0;
  await db.transaction().execute(async (transaction) => {
    await updateAccount(transaction, row.id, changes);
    await recordAccessChange(transaction, 'account_changed', row.id);
  });
  return toAccount({ ...row, ...changes });
}

/**
 * Changes some limits of an account: each field given replaces the stored one (null removes the limit, even a
 * configured default); fields not given stay as they are.
 */
export async function setAccountLimits(
  db: Kysely<Database>,
  nameOrId: string,
  change: Record<string, unknown>,
): Promise<Account> {
  const row = await requireAccount(db, nameOrId);
  const limits = JSON.stringify({ ...parseStoredLimits(row.limits), ...validateLimitChange(change) });
  await db.transaction().execute(async (transaction) => {
    await updateAccount(transaction, row.id, { limits });
    await recordAccessChange(transaction, 'account_changed', row.id);
  });
  return toAccount({ ...row, limits });
}
