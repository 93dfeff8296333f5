import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';

/** Reads of the request log that other features need (budgets, spill recovery). Rows are written and searched in src/request-log/. */

/** Dollars an account or a key has spent since `since` (for budgets), from the costs logged. */
export async function sumSpend(
  db: Kysely<Database>,
  subject: { accountId: string } | { keyId: string },
  since: number,
): Promise<number> {
  let query = db
    .selectFrom('request_log')
    .select((select) => select.fn.sum<number | string | null>('cost_usd').as('spent'))
    .where('created_at', '>=', since);
  if ('accountId' in subject) {
    query = query.where('account_id', '=', subject.accountId);
  } else {
    // The key's account leads the (account_id, key_id, created_at) index, the one index that finds a key's rows.
    const keyId = subject.keyId;
    query = query
      .where('account_id', '=', (select) =>
        select.selectFrom('api_keys').select('api_keys.account_id').where('api_keys.id', '=', keyId),
      )
      .where('key_id', '=', keyId);
  }
  const row = await query.executeTakeFirst();
  return Number(row?.spent ?? 0);
}

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
