import { type Kysely, sql } from 'kysely';

/**
 * Sign-in folds addresses with NFKC before looking them up (users/service.ts): a login stored earlier in
 * another form (full-width "ａｄｍｉｎ@…") could no longer sign in. Stored addresses are folded the same way, except
 * where two logins fold to one address: both are left as they are for an operator to settle (a start-up warning
 * names them, startup/warn-unfolded-emails.ts). Pending invitations are folded too, so accepting one finds its login.
 */

// The fold as it was when this migration was written: a migration must not change meaning if the application's does.
const fold = (email: string) => email.normalize('NFKC').trim().toLowerCase();

export async function up(db: Kysely<unknown>): Promise<void> {
  const { rows: users } = await sql<{ id: string; email: string }>`select id, email from users`.execute(db);
  const byFolded = new Map<string, Array<{ id: string; email: string }>>();
  for (const user of users) {
    const group = byFolded.get(fold(user.email)) ?? [];
    group.push(user);
    byFolded.set(fold(user.email), group);
  }
  for (const [folded, group] of byFolded) {
    const [only] = group;
    if (group.length !== 1 || only === undefined || only.email === folded) continue;
    await sql`update users set email = ${folded} where id = ${only.id}`.execute(db);
  }
  const { rows: invitations } = await sql<{ id: string; email: string }>`
    select id, email from invitations where accepted_at is null and revoked_at is null`.execute(db);
  for (const invitation of invitations) {
    const folded = fold(invitation.email);
    if (folded !== invitation.email) {
      await sql`update invitations set email = ${folded} where id = ${invitation.id}`.execute(db);
    }
  }
}

export async function down(): Promise<void> {
  // The folded form is the only one sign-in finds; the forms before it are not kept, and are not needed back.
}
