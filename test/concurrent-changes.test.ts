import { describe, expect, it } from 'vitest';
import { createAccount } from '../src/accounts/service.js';
import { findUserById } from '../src/db/repositories/users.js';
import { acceptInvitation, createInvitation } from '../src/users/invitations.js';
import { hashPassword, verifyPassword } from '../src/users/password.js';
import { addMember, createUser, removeMember, setMemberRole, setUserFlags } from '../src/users/service.js';
import { useGatewayWithMock } from './support/gateway-fixture.js';

/**
 * Guards that count before they write ("not the last owner", "not the last admin") hold when two changes race, on
 * both engines: without a lock, two owners demoted at once each count the other and leave the account with none, and
 * two admins demoted at once leave no admin.
 */

const setup = useGatewayWithMock();
const rounds = 12;

describe('changes that race', () => {
  it('leave an account one owner when its two owners are demoted or removed at once', async () => {
    const db = setup.gateway.gateway.database.db;
    for (let round = 0; round < rounds; round++) {
      const account = await createAccount(db, { name: `owned-${round}` });
      const first = await createUser(db, { email: `first-${round}@owners.test` });
      const second = await createUser(db, { email: `second-${round}@owners.test` });
      await addMember(db, account.id, first.id, 'owner');
      await addMember(db, account.id, second.id, 'owner');
      // Every other round one owner is removed instead of demoted: the same guard, another write.
      const results = await Promise.allSettled([
        setMemberRole(db, account.id, first.id, 'member'),
        round % 2 === 0 ? setMemberRole(db, account.id, second.id, 'member') : removeMember(db, account.id, second.id),
      ]);
      expect(results.map((result) => result.status).sort()).toEqual(['fulfilled', 'rejected']);
      const refused = results.find((result) => result.status === 'rejected');
      expect((refused as PromiseRejectedResult).reason).toMatchObject({ code: 'last_owner' });
      const owners = await db
        .selectFrom('memberships')
        .select('user_id')
        .where('account_id', '=', account.id)
        .where('role', '=', 'owner')
        .execute();
      expect(owners, `round ${round}`).toHaveLength(1);
    }
  });

  it('leave one active admin when the last two are demoted or disabled at once', async () => {
    const db = setup.gateway.gateway.database.db;
    const activeAdmins = () =>
      db.selectFrom('users').select('id').where('is_admin', '=', 1).where('disabled', '=', 0).execute();
    for (let round = 0; round < rounds; round++) {
      // Whatever admins earlier rounds left are made ordinary users: two admins race each round.
      for (const admin of await activeAdmins())
        await db.updateTable('users').set({ is_admin: 0 }).where('id', '=', admin.id).execute();
      const first = await createUser(db, { email: `first-${round}@admins.test`, admin: true });
      const second = await createUser(db, { email: `second-${round}@admins.test`, admin: true });
      const results = await Promise.allSettled([
        setUserFlags(db, first.id, { admin: false }),
        setUserFlags(db, second.id, round % 2 === 0 ? { admin: false } : { disabled: true }),
      ]);
      expect(results.map((result) => result.status).sort()).toEqual(['fulfilled', 'rejected']);
      const refused = results.find((result) => result.status === 'rejected');
      expect((refused as PromiseRejectedResult).reason).toMatchObject({ code: 'last_admin' });
      expect(await activeAdmins(), `round ${round}`).toHaveLength(1);
    }
  });

  it('give an invited login the password of the acceptance that used the invitation', async () => {
    const db = setup.gateway.gateway.database.db;
    const account = await createAccount(db, { name: 'inviting' });
    const decoyHash = await hashPassword('decoy password that nobody has');
    for (let round = 0; round < 4; round++) {
      // A login without a password yet (made by the operator), invited; two people open the link at once.
      const invited = await createUser(db, { email: `invited-${round}@inviting.test` });
      const { token } = await createInvitation(db, {
        accountId: account.id,
        email: invited.email,
        role: 'member',
        createdBy: null,
        ttlMs: 3_600_000,
      });
      const passwords = [`first passphrase of round ${round} here`, `second passphrase of round ${round} here`];
      const results = await Promise.allSettled(
        passwords.map((password) => acceptInvitation(db, token, { password, decoyHash })),
      );
      expect(results.map((result) => result.status).sort()).toEqual(['fulfilled', 'rejected']);
      const winner = passwords[results.findIndex((result) => result.status === 'fulfilled')] as string;
      const loser = passwords.find((password) => password !== winner) as string;
      const hash = (await findUserById(db, invited.id))?.password_hash as string;
      expect(await verifyPassword(winner, hash), `round ${round}`).toBe(true);
      expect(await verifyPassword(loser, hash), `round ${round}`).toBe(false);
    }
  });
});
