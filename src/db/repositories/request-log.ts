import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';

/** Reads of the request log that other features need (spill recovery). Rows are written and searched in src/request-log/. */

/** Which of these request ids already have a row (spill recovery skips them; `request_log_request_id` finds them). */
export async function requestIdsPresent(db: Kysely<Database>, requestIds: readonly string[]): Promise<Set<string>> {
  if (requestIds.length === 0) return new Set();
  const rows = await db
    .selectFrom('request_log')
    .select('request_id')
    .where('request_id', 'in', [...requestIds])
    .execute();
  return new Set(rows.map((row) => row.request_id));
}
