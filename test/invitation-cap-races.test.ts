import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../src/accounts/service.js';
import { createTestUser, signIn } from './support/console.js';
import { startTestGateway, type TestGateway } from './support/gateway.js';
import { type MockUpstream, startMockUpstream } from './support/mock-openai-upstream.js';

/**
 * The cap on an account's open invitations (console.max_pending_invitations) holds when invitations are made at once:
 * each is counted and inserted under the account's lock, on two nodes of one database as on one.
 */

const maxPending = 3;
const attempts = 12;

let mock: MockUpstream;
let first: TestGateway;
let second: TestGateway;
beforeAll(async () => {
  mock = await startMockUpstream();
  const config = { console: { max_pending_invitations: maxPending, invitation_limit_per_user: 1000 } };
  first = await startTestGateway({ mock, config });
  second = await startTestGateway({ mock, config, dataDir: first.dataDir, database: first.database });
});
afterAll(async () => {
  await second?.close();
  await first?.close();
  await mock?.close();
});

const openInvitations = async (accountId: string) =>
  (
    await first.gateway.database.db
      .selectFrom('invitations')
      .select('id')
      .where('account_id', '=', accountId)
      .where('revoked_at', 'is', null)
      .execute()
  ).length;

describe('invitations made at once', () => {
  it('make no more open invitations than the cap, on one node', async () => {
    const account = await createAccount(first.gateway.database.db, { name: 'race-one' });
    await createTestUser(first, { email: 'owner@race-one.test', account: 'race-one', role: 'owner' });
    const owner = await signIn(first, 'owner@race-one.test');
    const responses = await Promise.all(
      Array.from({ length: attempts }, (_unused, index) =>
        owner.request('POST', `/api/accounts/${account.id}/invitations`, {
          email: `guest${index}@elsewhere.test`,
          role: 'member',
        }),
      ),
    );
    const statuses = responses.map((response) => response.status).sort();
    expect(statuses).toEqual([...Array(maxPending).fill(201), ...Array(attempts - maxPending).fill(409)]);
    for (const refused of responses.filter((response) => response.status === 409)) {
      expect(refused.body.error.code).toBe('too_many_pending_invitations');
    }
    expect(await openInvitations(account.id)).toBe(maxPending);
  });

  it('make no more open invitations than the cap, on two nodes of one database', async () => {
    const account = await createAccount(first.gateway.database.db, { name: 'race-two' });
    await createTestUser(first, { email: 'owner@race-two.test', account: 'race-two', role: 'owner' });
    const owners = [await signIn(first, 'owner@race-two.test'), await signIn(second, 'owner@race-two.test')];
    const responses = await Promise.all(
      Array.from({ length: attempts }, (_unused, index) =>
        owners[index % 2]?.request('POST', `/api/accounts/${account.id}/invitations`, {
          email: `guest${index}@elsewhere.test`,
          role: 'member',
        }),
      ),
    );
    expect(responses.filter((response) => response?.status === 201)).toHaveLength(maxPending);
    expect(responses.filter((response) => response?.status === 409)).toHaveLength(attempts - maxPending);
    expect(await openInvitations(account.id)).toBe(maxPending);
  });
});
