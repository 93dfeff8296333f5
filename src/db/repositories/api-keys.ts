import type { Kysely, Selectable } from 'kysely';
import type { ApiKeysTable, Database } from '../schema.js';

export type ApiKeyRow = Selectable<ApiKeysTable>;

/** What the authenticator needs about a presented key: the key row plus its account's state. */
export interface KeyWithAccount {
  id: string;
  name: string;
  account_id: string;
  account_name: string;
  account_models: string;
  account_disabled: number;
  account_log_bodies: number;
  key_models: string | null;
  expires_at: number | null;
  revoked_at: number | null;
  account_limits: string | null;
  key_limits: string | null;
}

export async function insertApiKey(db: Kysely<Database>, key: ApiKeyRow): Promise<void> {
  await db.insertInto('api_keys').values(key).execute();
}

export async function findKeyByHmac(db: Kysely<Database>, hmac: string): Promise<KeyWithAccount | undefined> {
  return db
    .selectFrom('api_keys')
    .innerJoin('accounts', 'accounts.id', 'api_keys.account_id')
    .select([
      'api_keys.id',
      'api_keys.name',
      'api_keys.account_id',
      'accounts.name as account_name',
      'accounts.allowed_models as account_models',
      'accounts.disabled as account_disabled',
      'accounts.log_bodies as account_log_bodies',
      'api_keys.allowed_models as key_models',
      'api_keys.expires_at',
      'api_keys.revoked_at',
      'accounts.limits as account_limits',
      'api_keys.limits as key_limits',
    ])
    .where('api_keys.hmac', '=', hmac)
    .executeTakeFirst();
}

/** The key row whose HMAC this is (to find a key by its value without storing the value). */
export async function findKeyRowByHmac(db: Kysely<Database>, hmac: string): Promise<ApiKeyRow | undefined> {
  return db.selectFrom('api_keys').selectAll().where('hmac', '=', hmac).executeTakeFirst();
}

export async function findKeyById(db: Kysely<Database>, id: string): Promise<ApiKeyRow | undefined> {
  return db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function listKeysOfAccount(db: Kysely<Database>, accountId: string): Promise<ApiKeyRow[]> {
  return db
    .selectFrom('api_keys')
    .selectAll()
    .where('account_id', '=', accountId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

/**
 * The keys given and every other key of their accounts with the same name: what tells apart keys that share a name
 * (a rotated key and its successor), for a page of log rows, without reading every key of every account on it.
 */
export async function listKeysWithNamesakes(db: Kysely<Database>, keyIds: readonly string[]): Promise<ApiKeyRow[]> {
  if (keyIds.length === 0) return [];
  return db
    .selectFrom('api_keys as key')
    .selectAll('key')
    .where(({ exists, selectFrom }) =>
      exists(
        selectFrom('api_keys as listed')
          .select('listed.id')
          .whereRef('listed.account_id', '=', 'key.account_id')
          .whereRef('listed.name', '=', 'key.name')
          .where('listed.id', 'in', [...keyIds]),
      ),
    )
    .orderBy('key.created_at', 'desc')
    .orderBy('key.id', 'desc')
    .execute();
}

/**
 * Marks a key as replaced by its successor, unless it already was: one UPDATE guarded by `replaced_by is null`, so
 * that of two rotations at once only one applies (on PostgreSQL the second waits for the first's row lock, then finds
 * the key replaced). Returns whether this one did.
 */
export async function markKeyReplaced(
  db: Kysely<Database>,
  id: string,
  changes: { expires_at: number; replaced_by: string },
): Promise<boolean> {
  const result = await db
    .updateTable('api_keys')
    .set(changes)
    .where('id', '=', id)
    .where('replaced_by', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function updateApiKey(
  db: Kysely<Database>,
  id: string,
  changes: Partial<
    Pick<
      ApiKeyRow,
      'revoked_at' | 'expires_at' | 'replaced_by' | 'allowed_models' | 'limits' | 'operator_limits' | 'limits_set_by'
    >
  >,
): Promise<void> {
  await db.updateTable('api_keys').set(changes).where('id', '=', id).execute();
}

/** Records last use; only moves forward, so out-of-order batches from several nodes cannot move it back. */
export async function touchLastUsed(db: Kysely<Database>, id: string, at: number): Promise<void> {
  await db
    .updateTable('api_keys')
    .set({ last_used_at: at })
    .where('id', '=', id)
    .where((where) => where.or([where('last_used_at', 'is', null), where('last_used_at', '<', at)]))
    .execute();
}
