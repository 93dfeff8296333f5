import type { Kysely, Selectable } from 'kysely';
import type { Database, ManagementTokensTable } from '../schema.js';

export type ManagementTokenRow = Selectable<ManagementTokensTable>;

export async function insertManagementToken(db: Kysely<Database>, token: ManagementTokenRow): Promise<void> {
  await db.insertInto('management_tokens').values(token).execute();
}

export async function findManagementTokenByHash(
  db: Kysely<Database>,
  tokenHash: string,
): Promise<ManagementTokenRow | undefined> {
  return db.selectFrom('management_tokens').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
}

export async function findManagementTokenById(
  db: Kysely<Database>,
  id: string,
): Promise<ManagementTokenRow | undefined> {
  return db.selectFrom('management_tokens').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function listManagementTokensOfUser(db: Kysely<Database>, userId: string): Promise<ManagementTokenRow[]> {
  return db
    .selectFrom('management_tokens')
    .selectAll()
    .where('user_id', '=', userId)
    .orderBy('created_at', 'desc')
    .execute();
}

export async function updateManagementToken(
  db: Kysely<Database>,
  id: string,
  changes: Partial<Pick<ManagementTokenRow, 'revoked_at' | 'last_used_at'>>,
): Promise<void> {
  await db.updateTable('management_tokens').set(changes).where('id', '=', id).execute();
}

/** Revokes every token of a user that is not revoked yet; returns how many were. */
export async function revokeManagementTokensOfUser(db: Kysely<Database>, userId: string, at: number): Promise<number> {
  const result = await db
    .updateTable('management_tokens')
    .set({ revoked_at: at })
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}
