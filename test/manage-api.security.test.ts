import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { managementRoutes } from '../src/api/manage/index.js';
import type { AnyRoute } from '../src/api/manage/route.js';
import { generateKey } from '../src/keys/format.js';
import { setUserFlags } from '../src/users/service.js';
import {
  type ApiClient,
  accountId,
  anonymousClient,
  apiRequest,
  createTestUser,
  signIn,
  testPassword,
  tokenClient,
} from './support/console.js';
import { chatBody, startTestGateway, type TestGateway, waitForLogRows } from './support/gateway.js';
import { useGatewayWithMock } from './support/gateway-fixture.js';

/**
 * Authorization of the management API, route by route, driven by the route table itself: a route added later is
 * covered automatically (and a route with a body fails this file until it is given a sample body here).
 */

const setup = useGatewayWithMock();

let acme: string;
let globex: string;
let ownerA: ApiClient;
let memberA: ApiClient;
let ownerB: ApiClient;
let ownerBToken: string;
let ownerAToken: { id: string; token: string };
let admin: ApiClient;
let keyA: { id: string; key: string };
let memberAId: string;
let invitationA: { id: string; token: string };
let requestA: string;

/** A valid body for every route that takes one, so a refusal is the authorization's doing, not validation's. */
const sampleBodies: Record<string, unknown> = {
  'POST /api/session': { email: 'owner@acme.test', password: testPassword },
  'POST /api/session/password': { currentPassword: testPassword, newPassword: 'another good password' },
  'POST /api/tokens': { name: 'probe' },
  'POST /api/accounts': { name: 'intruder-made' },
  'PATCH /api/accounts/:accountId': {
    disabled: true,
    models: ['mock'],
    logBodies: true,
    limits: { requestsPerMinute: 1 },
  },
  'PATCH /api/accounts/:accountId/keys/:keyId/limits': { requestsPerMinute: 1, dailyBudgetUsd: 0 },
  'PATCH /api/accounts/:accountId/members/:userId': { role: 'owner' },
  'POST /api/accounts/:accountId/invitations': { email: 'intruder@evil.test', role: 'owner' },
  'POST /api/invitations/preview': { token: 'sbi_x' },
  'POST /api/invitations/accept': { token: 'sbi_x', password: testPassword },
  'POST /api/accounts/:accountId/keys': { name: 'intruder key' },
  'POST /api/accounts/:accountId/keys/:keyId/rotate': { gracePeriodSeconds: 0 },
  'POST /api/users': { email: 'intruder@evil.test', password: testPassword, admin: true },
  'PATCH /api/users/:userId': { admin: true },
  'POST /api/keys/revoke': { key: 'sk-sb-placeholder' },
  'POST /api/secret-scanning/github': [{ token: 'sk-sb-x', type: 'switchboard_api_key', url: '', source: 'content' }],
};

function pathFor(route: AnyRoute, params: Record<string, string>): string {
  return route.path.replace(/:(\w+)/g, (_match, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`no test value for :${name} in ${route.path}`);
    return encodeURIComponent(value);
  });
}

/** Path parameters naming account A's key, member, invitation, logged request and owner's token, under `accountId`. */
function resourcesOfA(accountId: string): Record<string, string> {
  return {
    accountId,
    keyId: keyA.id,
    userId: memberAId,
    invitationId: invitationA.id,
    requestId: requestA,
    tokenId: ownerAToken.id,
  };
}

function bodyFor(route: AnyRoute): unknown {
  if (!route.body) return undefined;
  const sample = sampleBodies[`${route.method} ${route.path}`];
  if (sample === undefined) throw new Error(`add a sample body for ${route.method} ${route.path} to this test`);
  return sample;
}

/** Everything of account A that an intruder might try to change, to compare before and after. */
async function snapshotOfA() {
  // Use times move with legitimate use during the test; everything else must stay exactly as it was.
  const withoutUseTimes = (rows: Array<Record<string, unknown>>) =>
    rows.map(({ lastUsedAt: _used, lastSignInAt: _signedIn, ...rest }) => rest);
  const snapshot = {
    account: (await admin.request('GET', `/api/accounts/${acme}`)).body,
    keys: (await admin.request('GET', `/api/accounts/${acme}/keys`)).body,
    members: (await admin.request('GET', `/api/accounts/${acme}/members`)).body,
    invitations: (await admin.request('GET', `/api/accounts/${acme}/invitations`)).body,
    tokens: (await ownerA.request('GET', '/api/tokens')).body,
  };
  return {
    ...snapshot,
    keys: withoutUseTimes(snapshot.keys),
    members: withoutUseTimes(snapshot.members),
    tokens: withoutUseTimes(snapshot.tokens),
  };
}

beforeAll(async () => {
  acme = await accountId(setup.gateway, 'acme');
  await createTestUser(setup.gateway, { email: 'root@operator.test', admin: true });
  admin = await signIn(setup.gateway, 'root@operator.test');
  globex = (await admin.request('POST', '/api/accounts', { name: 'globex' })).body.id;
  await createTestUser(setup.gateway, { email: 'owner@acme.test', account: 'acme', role: 'owner' });
  memberAId = (await createTestUser(setup.gateway, { email: 'member@acme.test', account: 'acme', role: 'member' })).id;
  await createTestUser(setup.gateway, { email: 'owner@globex.test', account: 'globex', role: 'owner' });
  ownerA = await signIn(setup.gateway, 'owner@acme.test');
  memberA = await signIn(setup.gateway, 'member@acme.test');
  ownerB = await signIn(setup.gateway, 'owner@globex.test');
  ownerBToken = (await ownerB.request('POST', '/api/tokens', { name: 'b-script' })).body.token;
  const createdToken = (await ownerA.request('POST', '/api/tokens', { name: 'a-script' })).body;
  ownerAToken = { id: createdToken.id, token: createdToken.token };
  const created = (await ownerA.request('POST', `/api/accounts/${acme}/keys`, { name: 'a-key' })).body;
  keyA = { id: created.id, key: created.key };
  const invitation = (
    await ownerA.request('POST', `/api/accounts/${acme}/invitations`, {
      email: 'pending@acme.test',
      role: 'member',
    })
  ).body;
  invitationA = { id: invitation.id, token: invitation.token };
  const response = await fetch(`${setup.gateway.baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${keyA.key}`, 'content-type': 'application/json' },
    body: JSON.stringify(chatBody('mock')),
  });
  requestA = response.headers.get('x-request-id') ?? '';
  await response.arrayBuffer();
  await waitForLogRows(setup.gateway, [requestA]);
});

const accountRoutes = managementRoutes.filter((route) => route.path.includes(':accountId'));

describe('a member of account B never reads or changes anything of account A', () => {
  it('covers every account route of the table', () => {
    expect(accountRoutes.length).toBeGreaterThanOrEqual(16);
    for (const route of accountRoutes) expect(['account-member', 'account-owner', 'admin']).toContain(route.access);
  });

  for (const via of ['session', 'management token'] as const) {
    it(`refuses every account route with 404 (via ${via}) and changes nothing`, async () => {
      const before = await snapshotOfA();
      const intruder = via === 'session' ? ownerB : tokenClient(setup.gateway, ownerBToken);
      const params = resourcesOfA(acme);
      for (const route of accountRoutes) {
        const response = await intruder.request(route.method, pathFor(route, params), bodyFor(route));
        expect(response.status, `${route.method} ${route.path}`).toBe(404);
        expect(response.body.error.code, `${route.method} ${route.path}`).toBe('account_not_found');
        expect(JSON.stringify(response.body)).not.toContain('a-key');
      }
      expect(await snapshotOfA()).toEqual(before);
      // And the key still works, the invitation can still be used.
      const models = await fetch(`${setup.gateway.baseUrl}/models`, {
        headers: { authorization: `Bearer ${keyA.key}` },
      });
      expect(models.status).toBe(200);
      const preview = await anonymousClient(setup.gateway).request('POST', '/api/invitations/preview', {
        token: invitationA.token,
      });
      expect(preview.status).toBe(200);
    });
  }

  it("refuses B's own routes pointed at A's resources (key, member, invitation, request ids) with 404", async () => {
    const params = resourcesOfA(globex);
    const before = await snapshotOfA();
    for (const route of accountRoutes.filter((candidate) =>
      /:(keyId|userId|invitationId|requestId)/.test(candidate.path),
    )) {
      const response = await ownerB.request(route.method, pathFor(route, params), bodyFor(route));
      expect(response.status, `${route.method} ${route.path}`).toBe(404);
    }
    expect(await snapshotOfA()).toEqual(before);
  });

  it("cannot revoke A's key by its value either: the same 404 as a key that does not exist, never echoing it", async () => {
    const before = await snapshotOfA();
    for (const intruder of [ownerB, tokenClient(setup.gateway, ownerBToken)]) {
      const response = await intruder.request('POST', '/api/keys/revoke', { key: keyA.key });
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe('key_not_found');
      expect(JSON.stringify(response.body)).not.toContain(keyA.key.slice(6));
      const unknown = await intruder.request('POST', '/api/keys/revoke', { key: generateKey() });
      expect(unknown.body).toEqual(response.body);
    }
    expect(await snapshotOfA()).toEqual(before);
  });

  it("does not list A in B's accounts, and cannot revoke A's management token", async () => {
    const accounts = await ownerB.request('GET', '/api/accounts');
    expect(accounts.body.map((account: { id: string }) => account.id)).toEqual([globex]);
    const revoke = await ownerB.request('DELETE', `/api/tokens/${ownerAToken.id}`);
    expect(revoke.status).toBe(404);
    expect((await tokenClient(setup.gateway, ownerAToken.token).request('GET', '/api/accounts')).status).toBe(200);
  });
});

describe('roles', () => {
  const adminRoutes = managementRoutes.filter((route) => route.access === 'admin');
  const ownerRoutes = managementRoutes.filter((route) => route.access === 'account-owner');

  it('refuses every admin route to an account owner with 403 (their own account included)', async () => {
    expect(adminRoutes.length).toBeGreaterThanOrEqual(7);
    const params = resourcesOfA(acme);
    const before = await snapshotOfA();
    for (const route of adminRoutes) {
      const response = await ownerA.request(route.method, pathFor(route, params), bodyFor(route));
      expect(response.status, `${route.method} ${route.path}`).toBe(403);
      expect(response.body.error.code).toBe('admin_only');
    }
    expect(await snapshotOfA()).toEqual(before);
  });

  it('refuses every owner route to a plain member with 403', async () => {
    expect(ownerRoutes.length).toBeGreaterThanOrEqual(6);
    const params = resourcesOfA(acme);
    const before = await snapshotOfA();
    for (const route of ownerRoutes) {
      const response = await memberA.request(route.method, pathFor(route, params), bodyFor(route));
      expect(response.status, `${route.method} ${route.path}`).toBe(403);
      expect(response.body.error.code).toBe('owner_only');
    }
    expect(await snapshotOfA()).toEqual(before);
  });

  it('lets a plain member manage keys and read everything else of the account', async () => {
    const created = await memberA.request('POST', `/api/accounts/${acme}/keys`, { name: 'member-made' });
    expect(created.status).toBe(201);
    expect((await memberA.request('POST', `/api/accounts/${acme}/keys/${created.body.id}/revoke`)).status).toBe(200);
    for (const path of ['logs', 'usage', 'models', 'members', 'keys']) {
      expect((await memberA.request('GET', `/api/accounts/${acme}/${path}`)).status, path).toBe(200);
    }
  });

  it('keeps the last owner and the last admin', async () => {
    const members = (await ownerA.request('GET', `/api/accounts/${acme}/members`)).body;
    const self = members.find((member: { email: string }) => member.email === 'owner@acme.test');
    const demote = await ownerA.request('PATCH', `/api/accounts/${acme}/members/${self.userId}`, { role: 'member' });
    expect(demote.status).toBe(409);
    expect(demote.body.error.code).toBe('last_owner');
    const remove = await ownerA.request('DELETE', `/api/accounts/${acme}/members/${self.userId}`);
    expect(remove.body.error.code).toBe('last_owner');
    const rootId = (await admin.request('GET', '/api/session')).body.user.id;
    const unadmin = await admin.request('PATCH', `/api/users/${rootId}`, { admin: false });
    expect(unadmin.status).toBe(409);
    expect(unadmin.body.error.code).toBe('last_admin');
  });
});

describe('authentication of /api', () => {
  it('refuses every non-public route without credentials (401), and with a bad or unknown token', async () => {
    const params = resourcesOfA(acme);
    for (const route of managementRoutes.filter((candidate) => candidate.auth !== 'public')) {
      const path = pathFor(route, params);
      const anonymous = await apiRequest(setup.gateway.url, route.method, path, { body: bodyFor(route) });
      expect(anonymous.status, `${route.method} ${route.path}`).toBe(401);
      expect(anonymous.body.error.code).toBe('not_signed_in');
      const unknown = await apiRequest(setup.gateway.url, route.method, path, {
        body: bodyFor(route),
        headers: { authorization: `Bearer sbm_${'A'.repeat(43)}` },
      });
      expect(unknown.status).toBe(401);
      expect(unknown.body.error.code).toBe('invalid_token');
      const apiKey = await apiRequest(setup.gateway.url, route.method, path, {
        body: bodyFor(route),
        headers: { authorization: `Bearer ${keyA.key}` },
      });
      expect(apiKey.status, 'an API key is not a management token').toBe(401);
    }
  });

  it('ignores a session cookie when an Authorization header is present', async () => {
    const response = await apiRequest(setup.gateway.url, 'GET', '/api/accounts', {
      headers: { cookie: `switchboard_session=${ownerA.cookie}`, authorization: 'Bearer nonsense' },
    });
    expect(response.status).toBe(401);
  });

  it('requires the CSRF token on every state-changing request made with the session cookie', async () => {
    const params = resourcesOfA(acme);
    const before = await snapshotOfA();
    const other = await signIn(setup.gateway, 'owner@acme.test');
    for (const route of managementRoutes.filter(
      (candidate) => candidate.auth !== 'public' && candidate.method !== 'GET',
    )) {
      for (const csrf of [undefined, other.csrfToken, 'x']) {
        const headers: Record<string, string> = { cookie: `switchboard_session=${ownerA.cookie}` };
        if (csrf) headers['x-csrf-token'] = csrf;
        const response = await apiRequest(setup.gateway.url, route.method, pathFor(route, params), {
          body: bodyFor(route),
          headers,
        });
        expect(response.status, `${route.method} ${route.path} csrf=${csrf}`).toBe(403);
        expect(response.body.error.code).toBe('csrf_token_invalid');
      }
    }
    expect(await snapshotOfA()).toEqual(before);
  });

  it('refuses requests a browser marks as cross-site, even with a valid CSRF token', async () => {
    const response = await ownerA.request(
      'POST',
      `/api/accounts/${acme}/keys`,
      { name: 'x' },
      { 'sec-fetch-site': 'cross-site' },
    );
    expect(response.status).toBe(403);
    expect(response.body.error.code).toBe('cross_site_request');
    const signInAttempt = await apiRequest(setup.gateway.url, 'POST', '/api/session', {
      body: { email: 'owner@acme.test', password: testPassword },
      headers: { 'sec-fetch-site': 'cross-site' },
    });
    expect(signInAttempt.status).toBe(403);
  });

  it('does not take a form post (a cross-site form cannot send JSON)', async () => {
    const response = await apiRequest(setup.gateway.url, 'POST', '/api/session', {
      body: `email=owner%40acme.test&password=${encodeURIComponent(testPassword)}`,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(response.status).toBe(415);
    expect(response.headers.get('set-cookie')).toBeNull();
  });

  it('keeps session-only routes (password, tokens, sign-out) away from management tokens', async () => {
    const script = tokenClient(setup.gateway, ownerAToken.token);
    for (const route of managementRoutes.filter((candidate) => candidate.auth === 'session')) {
      const response = await script.request(route.method, pathFor(route, { tokenId: ownerAToken.id }), bodyFor(route));
      expect(response.status, `${route.method} ${route.path}`).toBe(403);
      expect(response.body.error.code).toBe('session_only');
    }
  });

  it('confines an account-scoped token to its account, even for an admin', async () => {
    const scoped = (await admin.request('POST', '/api/tokens', { name: 'globex-only', accountId: globex })).body.token;
    const script = tokenClient(setup.gateway, scoped);
    expect((await script.request('GET', `/api/accounts/${globex}/keys`)).status).toBe(200);
    const other = await script.request('GET', `/api/accounts/${acme}/keys`);
    expect(other.status).toBe(404);
    expect((await script.request('GET', '/api/users')).status).toBe(403);
    expect((await script.request('GET', '/api/logs')).status).toBe(403);
  });

  it("revokes a disabled user's management tokens: enabling the user again revives none", async () => {
    const user = await createTestUser(setup.gateway, { email: 'leaver@acme.test', account: 'acme' });
    const session = await signIn(setup.gateway, 'leaver@acme.test');
    const token = (await session.request('POST', '/api/tokens', { name: 'leaver' })).body.token;
    expect((await tokenClient(setup.gateway, token).request('GET', '/api/accounts')).status).toBe(200);
    expect((await admin.request('PATCH', `/api/users/${user.id}`, { disabled: true })).status).toBe(200);
    expect((await tokenClient(setup.gateway, token).request('GET', '/api/accounts')).status).toBe(401);
    // Like a session (console-isolation.security.test.ts): a token copied before the user was disabled stays dead.
    expect((await admin.request('PATCH', `/api/users/${user.id}`, { disabled: false })).status).toBe(200);
    const afterEnabling = await tokenClient(setup.gateway, token).request('GET', '/api/accounts');
    expect(afterEnabling.status).toBe(401);
    expect(afterEnabling.body.error.code).toBe('invalid_token');
    const again = await signIn(setup.gateway, 'leaver@acme.test');
    const tokens = (await again.request('GET', '/api/tokens')).body as Array<{ name: string; status: string }>;
    expect(tokens.map((listed) => [listed.name, listed.status])).toEqual([['leaver', 'revoked']]);
    // A token made after enabling works.
    const fresh = (await again.request('POST', '/api/tokens', { name: 'back' })).body.token;
    expect((await tokenClient(setup.gateway, fresh).request('GET', '/api/accounts')).status).toBe(200);
  });

  it('ends the session a sign-in replaces, so a copy of the old cookie stops working', async () => {
    const old = await signIn(setup.gateway, 'member@acme.test');
    const wrong = await old.request('POST', '/api/session', {
      email: 'member@acme.test',
      password: 'not the password',
    });
    expect(wrong.status).toBe(401);
    expect((await old.request('GET', '/api/session')).status, 'a failed sign-in replaces nothing').toBe(200);
    const again = await old.request('POST', '/api/session', { email: 'member@acme.test', password: testPassword });
    expect(again.status).toBe(200);
    expect(again.headers.get('set-cookie')).not.toContain(old.cookie);
    const copied = await old.request('GET', '/api/session');
    expect(copied.status).toBe(401);
    expect(copied.body.error.code).toBe('not_signed_in');
  });

  it('ends the session an invitation accepted with a password replaces', async () => {
    const invited = await ownerA.request('POST', `/api/accounts/${acme}/invitations`, {
      email: 'replaces.session@acme.test',
      role: 'member',
    });
    expect(invited.status).toBe(201);
    // Signed in as someone else in this browser; accepting signs the browser in as the invitee instead.
    const old = await signIn(setup.gateway, 'member@acme.test');
    const accepted = await old.request('POST', '/api/invitations/accept', {
      token: invited.body.token,
      password: 'a brand new passphrase',
    });
    expect(accepted.status).toBe(200);
    expect(accepted.body.user.email).toBe('replaces.session@acme.test');
    expect((await old.request('GET', '/api/session')).status).toBe(401);
  });

  it('gives the same answer for an unknown address and a wrong password', async () => {
    const unknown = await apiRequest(setup.gateway.url, 'POST', '/api/session', {
      body: { email: 'nobody@x.test', password: 'whatever it is' },
    });
    const wrong = await apiRequest(setup.gateway.url, 'POST', '/api/session', {
      body: { email: 'owner@acme.test', password: 'whatever it is' },
    });
    expect(unknown.status).toBe(401);
    expect(unknown.body).toEqual(wrong.body);
  });
});

describe("GitHub's secret-scanning endpoint", () => {
  it('does not exist unless secret_scanning.enabled is set', async () => {
    const response = await anonymousClient(setup.gateway).request('POST', '/api/secret-scanning/github', [
      { token: keyA.key, type: 'switchboard_api_key', url: '', source: 'content' },
    ]);
    expect(response.status).toBe(404);
    expect(
      (await fetch(`${setup.gateway.baseUrl}/models`, { headers: { authorization: `Bearer ${keyA.key}` } })).status,
    ).toBe(200);
  });
});

describe('secrets', () => {
  it('never puts keys, tokens, cookies or passwords in a log line or in the database in clear', async () => {
    const db = setup.gateway.gateway.database.db;
    const secrets = [keyA.key, ownerAToken.token, ownerBToken, invitationA.token, ownerA.cookie ?? '', testPassword];
    const tables = [
      'accounts',
      'api_keys',
      'users',
      'memberships',
      'sessions',
      'management_tokens',
      'invitations',
      'request_log',
      'access_changes',
    ] as const;
    const dump = JSON.stringify(await Promise.all(tables.map((table) => db.selectFrom(table).selectAll().execute())));
    const logs = setup.gateway.logLines.join('\n');
    for (const secret of secrets) {
      expect(secret.length).toBeGreaterThan(10);
      expect(dump).not.toContain(secret);
      expect(logs).not.toContain(secret);
    }
  });
});

describe('sign-in limits and session lifetime', () => {
  let limited: TestGateway;
  beforeAll(async () => {
    limited = await startTestGateway({
      mock: setup.mock,
      config: {
        console: {
          sign_in_max_failures: 3,
          sign_in_window: '1h',
          session_ttl: '1h',
          session_idle_timeout: '10m',
          // The test speaks for several clients through X-Forwarded-For, as a proxy in front would.
          trust_proxy: true,
        },
      },
    });
    await createTestUser(limited, { email: 'target@acme.test', account: 'acme' });
    await createTestUser(limited, { email: 'bystander@acme.test', account: 'acme' });
    await createTestUser(limited, { email: 'disabled@acme.test', account: 'acme' });
  });
  afterAll(async () => limited?.close());

  const attempt = (email: string, password: string, client: string) =>
    apiRequest(limited.url, 'POST', '/api/session', {
      body: { email, password },
      headers: { 'x-forwarded-for': client },
    });

  it('makes a guessing client wait longer and longer, without locking the user out from anywhere else', async () => {
    for (let index = 0; index < 3; index++) {
      expect((await attempt('target@acme.test', 'guess number one', '203.0.113.7')).status).toBe(401);
    }
    // Past the free failures every further failure doubles the wait; the guesser soon gets only 429s.
    const waits: number[] = [];
    for (let index = 0; index < 8 && waits.length < 2; index++) {
      const response = await attempt('target@acme.test', 'guess number two', '203.0.113.7');
      if (response.status === 429) {
        expect(response.body.error.code).toBe('too_many_sign_in_attempts');
        waits.push(Number(response.headers.get('retry-after')));
      } else expect(response.status).toBe(401);
    }
    expect(waits.length).toBe(2);
    expect(waits[0]).toBeGreaterThan(0);
    // Even the right password waits, from the guessing client.
    const blocked = await attempt('target@acme.test', testPassword, '203.0.113.7');
    expect(blocked.status).toBe(429);
    expect(blocked.headers.get('set-cookie')).toBeNull();
    // The user, from any other address, signs in at once: someone else's guesses never lock them out.
    const owner = await attempt('target@acme.test', testPassword, '198.51.100.20');
    expect(owner.status).toBe(200);
    expect(owner.headers.get('set-cookie')).toContain('switchboard_session=');
    // And the guessing client may still sign in as someone else (its overall budget is larger).
    expect((await attempt('bystander@acme.test', testPassword, '203.0.113.7')).status).toBe(200);
  });

  it('checks no more passwords than the free failures when the guesses are sent all at once', async () => {
    // The clock stands still: on a busy machine a guess arriving after the first wait (1 s) may rightly be checked.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    try {
      const guesses = await Promise.all(
        Array.from({ length: 30 }, (_, index) =>
          attempt('bystander@acme.test', `parallel guess ${index}`, '203.0.113.99'),
        ),
      );
      const statuses = guesses.map((response) => response.status);
      expect(statuses.filter((status) => status === 401)).toHaveLength(3);
      expect(statuses.filter((status) => status === 429)).toHaveLength(27);
    } finally {
      vi.useRealTimers();
    }
  });

  it('never counts a weak password given to an invitation, whether or not the address has a login', async () => {
    // A password refused for its strength is checked against no login: the invitee's typing, not a guess. Counted
    // only where the address had a login, it would tell that it has one by the 429s.
    await createTestUser(limited, { email: 'inviter@acme.test', account: 'acme', role: 'owner' });
    await createTestUser(limited, { email: 'has-login@elsewhere.test' });
    const inviter = await signIn(limited, 'inviter@acme.test');
    const acme = await accountId(limited, 'acme');
    const tokens: string[] = [];
    for (const email of ['has-login@elsewhere.test', 'no-login@elsewhere.test']) {
      tokens.push(
        (await inviter.request('POST', `/api/accounts/${acme}/invitations`, { email, role: 'member' })).body.token,
      );
    }
    // The clock stands still, so no wait runs out between two attempts on a busy machine.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    try {
      for (const [index, token] of tokens.entries()) {
        const client = `198.51.100.${70 + index}`;
        const weak = ['password1234', 'qwertyuiop', 'aaaaaaaaaaaa', 'password12345', 'letmein12345', 'iloveyou1234'];
        const seen: Array<[number, string]> = [];
        for (const password of weak) {
          const response = await apiRequest(limited.url, 'POST', '/api/invitations/accept', {
            body: { token, password },
            headers: { 'x-forwarded-for': client },
          });
          seen.push([response.status, response.body.error?.code]);
        }
        expect(
          seen.every(([status, code]) => status === 400 && code?.startsWith('password_too_')),
          client,
        ).toBe(true);
        // The invitee's next, strong password is taken at once: a new login, or refused as not the login's.
        const strong = await apiRequest(limited.url, 'POST', '/api/invitations/accept', {
          body: { token, password: 'a strong passphrase at last' },
          headers: { 'x-forwarded-for': client },
        });
        expect(strong.status).toBe(index === 0 ? 401 : 200);
      }
    } finally {
      vi.useRealTimers();
    }
  });

  it('counts invitation links that do not work (unknown, used) as failed sign-ins of the client', async () => {
    const inviter = await signIn(limited, 'inviter@acme.test');
    const acme = await accountId(limited, 'acme');
    const used = (
      await inviter.request('POST', `/api/accounts/${acme}/invitations`, {
        email: 'used@elsewhere.test',
        role: 'member',
      })
    ).body.token;
    const client = '198.51.100.90';
    const accept = (token: string, password?: string) =>
      apiRequest(limited.url, 'POST', '/api/invitations/accept', {
        body: password === undefined ? { token } : { token, password },
        headers: { 'x-forwarded-for': client },
      });
    expect((await accept(used, 'a strong passphrase for this')).status).toBe(200);
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    try {
      const statuses: number[] = [];
      for (let attempt = 0; attempt < 6; attempt++) {
        const token = attempt % 2 === 0 ? used : `sbi_${'x'.repeat(43)}`;
        const response = await accept(token, 'a strong passphrase for this');
        statuses.push(response.status);
        if (response.status === 429) expect(response.body.error.code).toBe('too_many_sign_in_attempts');
      }
      // Three free failures (sign_in_max_failures), then the client waits.
      expect(statuses.slice(0, 3)).toEqual([404, 404, 404]);
      expect(statuses.slice(3)).toContain(429);
    } finally {
      vi.useRealTimers();
    }
  });

  it("answers a disabled user's right password exactly like a wrong one", async () => {
    const user = await limited.gateway.database.db
      .selectFrom('users')
      .select('id')
      .where('email', '=', 'disabled@acme.test')
      .executeTakeFirstOrThrow();
    await setUserFlags(limited.gateway.database.db, user.id, { disabled: true });
    const right = await attempt('disabled@acme.test', testPassword, '192.0.2.1');
    const wrong = await attempt('disabled@acme.test', 'not the password at all', '192.0.2.2');
    expect(right.status).toBe(401);
    expect(right.body).toEqual(wrong.body);
    expect(right.headers.get('set-cookie')).toBeNull();
  });

  it('ends an idle session, and an active one at its absolute lifetime', async () => {
    const idle = await signIn(limited, 'bystander@acme.test');
    const active = await signIn(limited, 'bystander@acme.test');
    // Time is the subject: the process's Date (which the gateway in this process reads for sessions) is moved on
    // in steps of six minutes; timers stay real.
    const signedInAt = Date.now();
    vi.useFakeTimers({ toFake: ['Date'], now: signedInAt, shouldAdvanceTime: true });
    try {
      const at = (minutes: number) => vi.setSystemTime(signedInAt + minutes * 60_000);
      at(6);
      expect((await active.request('GET', '/api/session')).status).toBe(200);
      at(12);
      expect((await active.request('GET', '/api/session')).status).toBe(200);
      // Twelve minutes without a request: past the ten-minute idle timeout.
      expect((await idle.request('GET', '/api/session')).status).toBe(401);
      for (let minutes = 18; minutes < 60; minutes += 6) {
        at(minutes);
        expect((await active.request('GET', '/api/session')).status, `at ${minutes} min`).toBe(200);
      }
      // Active all along, and still ended an hour after sign-in.
      at(61);
      const expired = await active.request('GET', '/api/session');
      expect(expired.status).toBe(401);
      expect(expired.body.error.code).toBe('not_signed_in');
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('cookies behind TLS', () => {
  it('marks the cookie Secure when configured, or when a trusted proxy says the request came over https', async () => {
    const always = await startTestGateway({ mock: setup.mock, config: { console: { secure_cookies: 'always' } } });
    const proxied = await startTestGateway({ mock: setup.mock, config: { console: { trust_proxy: true } } });
    try {
      await createTestUser(always, { email: 'a@b.test' });
      await createTestUser(proxied, { email: 'a@b.test' });
      const body = { email: 'a@b.test', password: testPassword };
      const first = await apiRequest(always.url, 'POST', '/api/session', { body });
      expect(first.headers.get('set-cookie')).toMatch(/; Secure$/);
      const overTls = await apiRequest(proxied.url, 'POST', '/api/session', {
        body,
        headers: { 'x-forwarded-proto': 'https' },
      });
      expect(overTls.headers.get('set-cookie')).toMatch(/; Secure$/);
      const plain = await apiRequest(proxied.url, 'POST', '/api/session', {
        body,
        headers: { 'x-forwarded-proto': 'http' },
      });
      expect(plain.headers.get('set-cookie')).not.toContain('Secure');
      // Without trust_proxy the header is ignored: anyone can send it.
      const untrusted = await apiRequest(setup.gateway.url, 'POST', '/api/session', {
        body: { email: 'owner@acme.test', password: testPassword },
        headers: { 'x-forwarded-proto': 'https' },
      });
      expect(untrusted.headers.get('set-cookie')).not.toContain('Secure');
    } finally {
      await always.close();
      await proxied.close();
    }
  });
});
