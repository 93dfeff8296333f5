import type { Kysely, Selectable } from 'kysely';
import type { Database, SessionsTable } from '../schema.js';

export type SessionRow = Selectable<SessionsTable>;

export async function insertSession(db: Kysely<Database>, session: SessionRow): Promise<void> {
  await db.insertInto('sessions').values(session).execute();
}

export async function findSession(db: Kysely<Database>, id: string): Promise<SessionRow | undefined> {
  return db.selectFrom('sessions').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function touchSession(db: Kysely<Database>, id: string, at: number): Promise<void> {
  await db.updateTable('sessions').set({ last_seen_at: at }).where('id', '=', id).execute();
}

export async function deleteSession(db: Kysely<Database>, id: string): Promise<void> {
  await db.deleteFrom('sessions').where('id', '=', id).execute();
}

/** Ends every session of a user (a new password, a disabled user: every device must sign in again). */
export async function deleteSessionsOfUser(db: Kysely<Database>, userId: string): Promise<number> {
  const result = await db.deleteFrom('sessions').where('user_id', '=', userId).executeTakeFirst();
  return Number(result.numDeletedRows);
}

export async function deleteExpiredSessions(db: Kysely<Database>, now: number): Promise<void> {
  await db.deleteFrom('sessions').where('expires_at', '<=', now).execute();
}
