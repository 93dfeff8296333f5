import type { Kysely } from 'kysely';

/**
 * `streaming_until` on a row that stands for a response still streaming (`in_progress`, migration 0015): until when the
 * node serving the stream has said it is still running (it moves this on while the stream lasts). A row past it is
 * read as failed (db/repositories/responses.ts): its node stopped without ending it, and it would otherwise read as
 * streaming until `responses.retention`. NULL on every other row, and on rows of nodes older than this column (read
 * then from `created_at`).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('responses').addColumn('streaming_until', 'bigint').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('responses').dropColumn('streaming_until').execute();
}
