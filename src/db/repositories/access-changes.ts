import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';

export type AccessChangeKind = 'key_created' | 'key_revoked' | 'key_rotated' | 'key_changed' | 'account_changed';

/** Appends to the feed every server polls, so a change made anywhere reaches every process's caches. */
export async function recordAccessChange(db: Kysely<Database>, kind: AccessChangeKind, subject: string): Promise<void> {
  await db.insertInto('access_changes').values({ created_at: Date.now(), kind, subject }).execute();
}

export async function latestAccessChangeId(db: Kysely<Database>): Promise<number> {
  const row = await db
    .selectFrom('access_changes')
    .select((select) => select.fn.max('id').as('latest'))
    .executeTakeFirst();
  return Number(row?.latest ?? 0);
}
