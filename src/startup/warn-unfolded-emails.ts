import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { Logger } from '../observability/logger.js';
import { foldEmail } from '../users/service.js';

/**
 * Logins whose stored address is not in the form sign-in looks up (folded, users/service.ts) cannot sign in. Migration
 * 0016 folded every address it could; what is left are two logins of one address, which only an operator can settle
 * (the one in the folded form signs in; the other is best disabled by id on the Users page): each start-up says which.
 */
export async function warnOfUnfoldedEmails(db: Kysely<Database>, logger: Logger): Promise<void> {
  // A warning never stops the start-up.
  const users = await db
    .selectFrom('users')
    .select(['id', 'email'])
    .execute()
    .catch(() => []);
  const unfolded = users.filter((user) => foldEmail(user.email) !== user.email);
  if (unfolded.length === 0) return;
  logger.warn(
    { users: unfolded.map((user) => ({ id: user.id, email: user.email, signsInAs: foldEmail(user.email) })) },
    'these logins cannot sign in: their address, folded as sign-in folds it, is that of another login (which can); ' +
      'disable them on the Users page and let their holders use the other',
  );
}
