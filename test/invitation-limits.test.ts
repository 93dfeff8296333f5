import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../src/accounts/service.js';
import { runCliJson } from './support/cli.js';
import { type ApiClient, accountId, createTestUser, signIn } from './support/console.js';
import { testRedisUrl } from './support/environment.js';
import { startTestGateway, type TestGateway } from './support/gateway.js';
import { type MockUpstream, startMockUpstream } from './support/mock-openai-upstream.js';

/**
 * Invitations made through the management API are limited per inviting user and per account in a window, and an
 * account has at most so many open at once: a compromised owner's session or a runaway script cannot fill the
 * database with them. The operator's CLI is not limited. Shared by two nodes through Redis like the sign-in throttle
 * (workers.test.ts has `serve --workers`).
 */

let mock: MockUpstream;
beforeAll(async () => {
  mock = await startMockUpstream();
});
afterAll(async () => mock?.close());

const invite = (client: ApiClient, account: string, email: string) =>
  client.request('POST', `/api/accounts/${account}/invitations`, { email, role: 'member' });

describe('one node', () => {
  let gateway: TestGateway;
  let acme: string;
  beforeAll(async () => {
    gateway = await startTestGateway({
      mock,
      config: {
        console: { invitation_limit_per_user: 3, invitation_limit_per_account: 5, max_pending_invitations: 4 },
      },
    });
    acme = await accountId(gateway, 'acme');
    await createTestUser(gateway, { email: 'first.owner@acme.test', account: 'acme', role: 'owner' });
    await createTestUser(gateway, { email: 'second.owner@acme.test', account: 'acme', role: 'owner' });
  });
  afterAll(async () => gateway?.close());

  it('refuses a user past their limit, and the account past its own, with 429 and retry-after', async () => {
    const first = await signIn(gateway, 'first.owner@acme.test');
    const second = await signIn(gateway, 'second.owner@acme.test');
    // Revoked as they go, so the cap on open invitations is not what stops them here.
    const inviteAndRevoke = async (client: ApiClient, email: string) => {
      const response = await invite(client, acme, email);
      if (response.status === 201) {
        expect((await client.request('DELETE', `/api/accounts/${acme}/invitations/${response.body.id}`)).status).toBe(
          204,
        );
      }
      return response;
    };
    for (let index = 0; index < 3; index++) {
      expect((await inviteAndRevoke(first, `person${index}@elsewhere.test`)).status).toBe(201);
    }
    const refused = await inviteAndRevoke(first, 'person3@elsewhere.test');
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ code: 'too_many_invitations', type: 'rate_limit_error', param: null });
    expect(refused.body.error.message).toContain('Try again in');
    expect(refused.body.error.message).toContain('invitations');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // Another owner has a budget of their own, until the account's (5) is spent.
    expect((await inviteAndRevoke(second, 'person4@elsewhere.test')).status).toBe(201);
    expect((await inviteAndRevoke(second, 'person5@elsewhere.test')).status).toBe(201);
    const accountSpent = await inviteAndRevoke(second, 'person6@elsewhere.test');
    expect([accountSpent.status, accountSpent.body.error?.code]).toEqual([429, 'too_many_invitations']);
    // Nothing was made past the limits.
    const rows = await gateway.gateway.database.db
      .selectFrom('invitations')
      .select('email')
      .where('account_id', '=', acme)
      .execute();
    expect(rows.map((row) => row.email).sort()).toEqual(
      [0, 1, 2, 4, 5].map((index) => `person${index}@elsewhere.test`),
    );
  });

  it('refuses an invitation past the open ones an account may have (409), until one is revoked', async () => {
    const beta = await createAccount(gateway.gateway.database.db, { name: 'beta' });
    await createTestUser(gateway, { email: 'one@beta.test', account: 'beta', role: 'owner' });
    await createTestUser(gateway, { email: 'two@beta.test', account: 'beta', role: 'owner' });
    const one = await signIn(gateway, 'one@beta.test');
    const two = await signIn(gateway, 'two@beta.test');
    const made: string[] = [];
    for (const [client, email] of [
      [one, 'a@elsewhere.test'],
      [one, 'b@elsewhere.test'],
      [two, 'c@elsewhere.test'],
      [two, 'd@elsewhere.test'],
    ] as const) {
      const response = await invite(client, beta.id, email);
      expect(response.status).toBe(201);
      made.push(response.body.id);
    }
    const full = await invite(two, beta.id, 'e@elsewhere.test');
    expect(full.status).toBe(409);
    expect(full.body.error).toMatchObject({ code: 'too_many_pending_invitations', type: 'invalid_request_error' });
    expect(full.body.error.message).toContain('Revoke');
    expect((await two.request('DELETE', `/api/accounts/${beta.id}/invitations/${made[0]}`)).status).toBe(204);
    expect((await invite(two, beta.id, 'e@elsewhere.test')).status).toBe(201);
  });

  it("does not limit the operator's CLI", async () => {
    for (let index = 0; index < 6; index++) {
      await runCliJson(
        ['users', 'invite', `cli${index}@elsewhere.test`, '--account', 'acme', '--data-dir', gateway.dataDir],
        { env: gateway.cliEnv },
      );
    }
  });
});

describe('two nodes sharing Redis', () => {
  let first: TestGateway;
  let second: TestGateway;
  beforeAll(async () => {
    const config = {
      redis: { url: testRedisUrl(), key_prefix: `test-${randomBytes(4).toString('hex')}:` },
      console: { invitation_limit_per_user: 2 },
    };
    first = await startTestGateway({ mock, config });
    second = await startTestGateway({ mock, config, dataDir: first.dataDir, database: first.database });
    await createTestUser(first, { email: 'owner@acme.test', account: 'acme', role: 'owner' });
  });
  afterAll(async () => {
    await second?.close();
    await first?.close();
  });

  it("counts a user's invitations on every node", async () => {
    const acme = await accountId(first, 'acme');
    const onFirst = await signIn(first, 'owner@acme.test');
    const onSecond = await signIn(second, 'owner@acme.test');
    expect((await invite(onFirst, acme, 'x@elsewhere.test')).status).toBe(201);
    expect((await invite(onSecond, acme, 'y@elsewhere.test')).status).toBe(201);
    expect((await invite(onFirst, acme, 'z@elsewhere.test')).status).toBe(429);
    expect((await invite(onSecond, acme, 'z@elsewhere.test')).status).toBe(429);
  });
});

describe('Redis unreachable', () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway({
      mock,
      config: {
        redis: { url: 'redis://127.0.0.1:1', command_timeout: '200ms' },
        console: { invitation_limit_per_user: 2 },
      },
    });
    await createTestUser(gateway, { email: 'owner@acme.test', account: 'acme', role: 'owner' });
  });
  afterAll(async () => gateway?.close());

  it("limits invitations with this node's own count, and says so in the log", async () => {
    const acme = await accountId(gateway, 'acme');
    const owner = await signIn(gateway, 'owner@acme.test');
    const statuses: number[] = [];
    for (const email of ['p@elsewhere.test', 'q@elsewhere.test', 'r@elsewhere.test']) {
      statuses.push((await invite(owner, acme, email)).status);
    }
    expect(statuses).toEqual([201, 201, 429]);
    expect(gateway.logLines.join('\n')).toContain('invitations are limited by this node alone');
  });
});
