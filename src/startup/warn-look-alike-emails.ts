import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { Logger } from '../observability/logger.js';
import { findLookAlike } from '../users/look-alike-email.js';

/**
 * Logins stored before look-alike letters were refused (users/look-alike-email.ts) keep working; each start-up names
 * them, so an operator can check who holds each and rename it (`switchboard users rename`) or disable it. Nothing is
 * changed or deleted here.
 */
export async function warnOfLookAlikeEmails(db: Kysely<Database>, logger: Logger): Promise<void> {
  // A warning never stops the start-up.
  try {
    const users = await db.selectFrom('users').select(['id', 'email']).orderBy('id').execute();
    const lookAlikes: Array<{ id: string; email: string; reason: string }> = [];
    for (const user of users) {
      const finding = await findLookAlike(user.email);
      if (finding) lookAlikes.push({ id: user.id, email: user.email, reason: `${finding.part}: ${finding.reason}` });
    }
    if (lookAlikes.length === 0) return;
    logger.warn(
      { users: lookAlikes },
      'these logins have addresses that could be mistaken for others (look-alike letters of another script); check ' +
        'who holds each, then rename (switchboard users rename) or disable it',
    );
  } catch (error) {
    logger.warn({ err: error }, 'could not check the logins for look-alike addresses');
  }
}
