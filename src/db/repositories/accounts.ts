import type { Kysely, Selectable } from 'kysely';
import type { AccountsTable, Database } from '../schema.js';

export type AccountRow = Selectable<AccountsTable>;

export async function insertAccount(db: Kysely<Database>, account: AccountRow): Promise<void> {
  await db.insertInto('accounts').values(account).execute();
}

export async function findAccountByName(db: Kysely<Database>, name: string): Promise<AccountRow | undefined> {
  return db.selectFrom('accounts').selectAll().where('name', '=', name).executeTakeFirst();
}

export async function findAccountById(db: Kysely<Database>, id: string): Promise<AccountRow | undefined> {
  return db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function listAccounts(db: Kysely<Database>): Promise<AccountRow[]> {
  return db.selectFrom('accounts').selectAll().orderBy('name').execute();
}

export async function updateAccount(
  db: Kysely<Database>,
  id: string,
  changes: Partial<Pick<AccountRow, 'allowed_models' | 'disabled' | 'log_bodies' | 'limits'>>,
): Promise<void> {
  await db.updateTable('accounts').set(changes).where('id', '=', id).execute();
}
