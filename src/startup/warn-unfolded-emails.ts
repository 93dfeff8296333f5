import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { Logger } from '../observability/logger.js';
import { normaliseEmail } from '../users/service.js';

/**
 * Logins whose stored address is not one sign-in can look up (users/service.ts) cannot sign in. Migration 0016 folded
 * every address it could; what can be left: two logins of one folded address, which only an operator can settle (the
 * one in the folded form signs in; the other is best disabled by id on the Users page), and addresses stored before
 * invisible characters were refused. Each start-up says which.
 */
export async function warnOfUnfoldedEmails(db: Kysely<Database>, logger: Logger): Promise<void> {
  // A warning never stops the start-up.
  const users = await db
    .selectFrom('users')
    .select(['id', 'email'])
    .orderBy('id')
    .execute()
    .catch(() => []);
  const stranded = users.flatMap((user) => {
    let signsInAs: string;
    try {
      signsInAs = normaliseEmail(user.email);
    } catch {
      return [{ id: user.id, email: user.email, reason: 'sign-in refuses the address (invisible characters)' }];
    }
    if (signsInAs === user.email) return [];
    return [{ id: user.id, email: user.email, reason: `another login has the address ${signsInAs}` }];
  });
  if (stranded.length === 0) return;
  logger.warn(
    { users: stranded },
    'these logins cannot sign in; disable them on the Users page and let their holders use (or be invited to) ' +
      'another address',
  );
}
