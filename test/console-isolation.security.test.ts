import { beforeAll, describe, expect, it } from 'vitest';
import { managementRoutes } from '../src/api/manage/index.js';
import { type ApiClient, accountId, apiRequest, createTestUser, signIn, testPassword } from './support/console.js';
import { chatBody, waitForLogRows } from './support/gateway.js';
import { useGatewayWithMock } from './support/gateway-fixture.js';

/**
 * Findings of the console's security hunt (sessions, tenant isolation of the management API, the log export, the
 * console's response headers), one regression test each. Authorization route by route is in
 * manage-api.security.test.ts, stored XSS in the browser in console-xss.e2e.test.ts.
 */

const setup = useGatewayWithMock();

let acme: string;
let admin: ApiClient;

beforeAll(async () => {
  acme = await accountId(setup.gateway, 'acme');
  await createTestUser(setup.gateway, { email: 'root@operator.test', admin: true });
  admin = await signIn(setup.gateway, 'root@operator.test');
});

describe('sessions', () => {
  it('ends every session of a user the operator disables, for good: enabling them again revives none', async () => {
    const user = await createTestUser(setup.gateway, { email: 'stolen@acme.test', account: 'acme' });
    // One session is the holder's, the other a copy of the cookie someone took: the operator disables the user.
    const holder = await signIn(setup.gateway, 'stolen@acme.test');
    const thief = await signIn(setup.gateway, 'stolen@acme.test');
    expect((await thief.request('GET', `/api/accounts/${acme}/keys`)).status).toBe(200);
    expect((await admin.request('PATCH', `/api/users/${user.id}`, { disabled: true })).status).toBe(200);
    expect((await thief.request('GET', '/api/session')).status).toBe(401);
    expect((await admin.request('PATCH', `/api/users/${user.id}`, { disabled: false })).status).toBe(200);
    for (const client of [holder, thief]) {
      const after = await client.request('GET', '/api/session');
      expect(after.status).toBe(401);
      expect(after.body.error.code).toBe('not_signed_in');
    }
    // The holder signs in again with the password, as anyone re-enabled would.
    expect((await (await signIn(setup.gateway, 'stolen@acme.test')).request('GET', '/api/session')).status).toBe(200);
    const rows = await setup.gateway.gateway.database.db
      .selectFrom('sessions')
      .select('id')
      .where('user_id', '=', user.id)
      .execute();
    expect(rows).toHaveLength(1);
  });
});

describe('two session cookies in one request', () => {
  it('are refused, never read as whichever comes first (a cookie another site under the domain set)', async () => {
    await createTestUser(setup.gateway, { email: 'victim2@acme.test', account: 'acme', role: 'owner' });
    await createTestUser(setup.gateway, { email: 'mallory@evil.test' });
    const victim = await signIn(setup.gateway, 'victim2@acme.test');
    const mallory = await signIn(setup.gateway, 'mallory@evil.test');
    // A sibling subdomain can set a cookie of the same name for a longer path, which browsers send first.
    for (const cookie of [
      `switchboard_session=${mallory.cookie}; switchboard_session=${victim.cookie}`,
      `switchboard_session=${victim.cookie}; switchboard_session=${mallory.cookie}`,
    ]) {
      const session = await apiRequest(setup.gateway.url, 'GET', '/api/session', { headers: { cookie } });
      expect(session.status).toBe(400);
      expect(session.body.error.code).toBe('ambiguous_session_cookie');
      expect(JSON.stringify(session.body)).not.toContain('mallory');
    }
    // One cookie works as before.
    expect((await victim.request('GET', '/api/session')).body.user.email).toBe('victim2@acme.test');
  });
});

describe('a password change', () => {
  it('replaces the session that made it: a copy of its cookie stops working, this browser goes on with a new one', async () => {
    await createTestUser(setup.gateway, { email: 'changer@acme.test', account: 'acme' });
    const here = await signIn(setup.gateway, 'changer@acme.test');
    const elsewhere = await signIn(setup.gateway, 'changer@acme.test');
    // The copy someone took of this browser's cookie and CSRF token (the reason to change the password, often).
    const copy = { cookie: `switchboard_session=${here.cookie}`, 'x-csrf-token': here.csrfToken ?? '' };
    const changed = await here.request('POST', '/api/session/password', {
      currentPassword: testPassword,
      newPassword: 'a brand new passphrase',
    });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ sessionsEnded: 1, managementTokensRevoked: 0 });
    const fresh = /switchboard_session=([^;]+)/.exec(changed.headers.get('set-cookie') ?? '')?.[1];
    expect(fresh).toBeDefined();
    expect(fresh).not.toBe(here.cookie);
    expect(changed.headers.get('set-cookie')).toMatch(/; Path=\/api; HttpOnly; SameSite=Strict; Max-Age=\d+$/);
    expect(changed.body.csrfToken).not.toBe(here.csrfToken);
    for (const stale of [copy, { cookie: `switchboard_session=${elsewhere.cookie}` }]) {
      const refused = await apiRequest(setup.gateway.url, 'POST', `/api/accounts/${acme}/keys`, {
        body: { name: 'by the thief' },
        headers: stale,
      });
      expect(refused.status).toBe(401);
    }
    const newSession = { cookie: `switchboard_session=${fresh}`, 'x-csrf-token': changed.body.csrfToken };
    const created = await apiRequest(setup.gateway.url, 'POST', `/api/accounts/${acme}/keys`, {
      body: { name: 'by the holder' },
      headers: newSession,
    });
    expect(created.status).toBe(201);
    // The old CSRF token does not go with the new cookie.
    const oldToken = await apiRequest(setup.gateway.url, 'POST', `/api/accounts/${acme}/keys`, {
      body: { name: 'x' },
      headers: { ...newSession, 'x-csrf-token': here.csrfToken ?? '' },
    });
    expect(oldToken.status).toBe(403);
  });
});

describe("another account's ids", () => {
  const bodies: Record<string, unknown> = {
    'POST /api/accounts/:accountId/keys/:keyId/rotate': { gracePeriodSeconds: 0 },
    'PATCH /api/accounts/:accountId/keys/:keyId/limits': { requestsPerMinute: 1 },
    'PATCH /api/accounts/:accountId/members/:userId': { role: 'owner' },
  };

  /** Replaces the last character of an id: the same shape, nothing behind it. */
  const missing = (id: string) => `${id.slice(0, -1)}${id.endsWith('0') ? '1' : '0'}`;

  it("answer a member of B exactly as an id that does not exist would, on B's own routes", async () => {
    const globex = (await admin.request('POST', '/api/accounts', { name: 'globex-ids' })).body.id as string;
    await createTestUser(setup.gateway, { email: 'owner@ids-a.test', account: 'acme', role: 'owner' });
    const memberOfA = await createTestUser(setup.gateway, { email: 'member@ids-a.test', account: 'acme' });
    await createTestUser(setup.gateway, { email: 'owner@ids-b.test', account: 'globex-ids', role: 'owner' });
    const ownerA = await signIn(setup.gateway, 'owner@ids-a.test');
    const ownerB = await signIn(setup.gateway, 'owner@ids-b.test');
    const keyOfA = (await ownerA.request('POST', `/api/accounts/${acme}/keys`, { name: 'secret-project-x' })).body;
    const invitationOfA = (
      await ownerA.request('POST', `/api/accounts/${acme}/invitations`, { email: 'x@ids-a.test', role: 'member' })
    ).body;
    const tokenOfA = (await ownerA.request('POST', '/api/tokens', { name: 'a-script' })).body;
    const call = await fetch(`${setup.gateway.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${keyOfA.key}`, 'content-type': 'application/json' },
      body: JSON.stringify(chatBody('mock')),
    });
    await call.arrayBuffer();
    const requestOfA = call.headers.get('x-request-id') ?? '';
    await waitForLogRows(setup.gateway, [requestOfA]);
    const idsOfA: Record<string, string> = {
      keyId: keyOfA.id,
      userId: memberOfA.id,
      invitationId: invitationOfA.id,
      requestId: requestOfA,
      tokenId: tokenOfA.id,
    };
    const routes = managementRoutes.filter(
      (route) => /:(keyId|userId|invitationId|requestId|tokenId)/.test(route.path) && route.access !== 'admin',
    );
    expect(routes.length).toBeGreaterThanOrEqual(9);
    for (const route of routes) {
      const name = /:(keyId|userId|invitationId|requestId|tokenId)/.exec(route.path)?.[1] as string;
      const real = idsOfA[name] as string;
      const path = (id: string) => route.path.replace(':accountId', globex).replace(`:${name}`, id);
      const body = bodies[`${route.method} ${route.path}`];
      const foreign = await ownerB.request(route.method, path(real), body);
      const absent = await ownerB.request(route.method, path(missing(real)), body);
      const label = `${route.method} ${route.path}`;
      expect(foreign.status, label).toBe(404);
      expect(JSON.stringify(foreign.body).replaceAll(real, 'ID'), label).toBe(
        JSON.stringify(absent.body).replaceAll(missing(real), 'ID'),
      );
      expect(JSON.stringify(foreign.body), label).not.toMatch(/secret-project-x|ids-a\.test|acme/);
    }
    // Nor do the log's and the export's filters find A's rows or name A's keys.
    for (const query of [`key=${keyOfA.id}`, `requestId=${requestOfA}`, 'model=mock', 'provider=mock']) {
      const page = await ownerB.request('GET', `/api/accounts/${globex}/logs?${query}`);
      expect(page.status, query).toBe(200);
      expect(page.body, query).toEqual({ data: [], keys: [], nextCursor: null });
      const exported = await ownerB.request('GET', `/api/accounts/${globex}/logs/export?format=csv&${query}`);
      expect(String(exported.body).trim().split('\n'), query).toHaveLength(1);
    }
    // Still there for A.
    expect((await ownerA.request('GET', `/api/accounts/${acme}/keys/${keyOfA.id}`)).body.status).toBe('active');
    expect((await ownerA.request('GET', `/api/accounts/${acme}/members`)).body).toContainEqual(
      expect.objectContaining({ userId: memberOfA.id, role: 'member' }),
    );
  });
});

describe('cross-site forms', () => {
  it('change nothing on any state-changing route: text/plain, urlencoded and multipart bodies, with the cookie', async () => {
    await createTestUser(setup.gateway, { email: 'victim@acme.test', account: 'acme', role: 'owner' });
    const victim = await signIn(setup.gateway, 'victim@acme.test');
    const keysBefore = (await admin.request('GET', `/api/accounts/${acme}/keys`)).body;
    const bodies = {
      'text/plain': '{"name":"planted","email":"victim@acme.test","password":"correct horse battery staple"}',
      'application/x-www-form-urlencoded': 'name=planted&email=victim%40acme.test',
      'multipart/form-data; boundary=x':
        '--x\r\nContent-Disposition: form-data; name="name"\r\n\r\nplanted\r\n--x--\r\n',
    };
    for (const route of managementRoutes.filter((candidate) => candidate.method !== 'GET')) {
      const path = route.path.replace(':accountId', acme).replace(/:\w+/g, 'x');
      for (const [contentType, body] of Object.entries(bodies)) {
        // What a browser without Fetch Metadata sends for a cross-site form: the cookie (were it not SameSite), no
        // CSRF token, a form's content type.
        const response = await apiRequest(setup.gateway.url, route.method, path, {
          body,
          headers: { cookie: `switchboard_session=${victim.cookie}`, 'content-type': contentType },
        });
        const label = `${route.method} ${route.path} ${contentType}`;
        expect([403, 415], label).toContain(response.status);
        expect(response.headers.get('set-cookie'), label).toBeNull();
      }
    }
    expect((await admin.request('GET', `/api/accounts/${acme}/keys`)).body).toEqual(keysBefore);
    expect((await victim.request('GET', '/api/session')).status).toBe(200);
  });
});

describe('response headers', () => {
  it('forbid framing, sniffing, referrers and cross-origin reads on every /api answer, errors included', async () => {
    const answers = [
      await fetch(`${setup.gateway.url}/api/session`),
      await fetch(`${setup.gateway.url}/api/openapi.json`),
      await fetch(`${setup.gateway.url}/api/no-such-route?<b>x</b>`),
      await fetch(`${setup.gateway.url}/api/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'email=a',
      }),
      await fetch(`${setup.gateway.url}/api/accounts/${acme}/keys`, {
        headers: { cookie: `switchboard_session=${admin.cookie}` },
      }),
      await fetch(`${setup.gateway.url}/console/assets/missing.js`),
      await fetch(`${setup.gateway.url}/healthz`),
    ];
    for (const answer of answers) {
      const label = `${answer.url} ${answer.status}`;
      // An answer that echoes its input is never a page, whatever a browser makes of it: it may load nothing.
      expect(answer.headers.get('content-security-policy'), label).toBe("default-src 'none'; frame-ancestors 'none'");
      expect(answer.headers.get('x-frame-options'), label).toBe('DENY');
      expect(answer.headers.get('x-content-type-options'), label).toBe('nosniff');
      expect(answer.headers.get('referrer-policy'), label).toBe('no-referrer');
      expect(answer.headers.get('cross-origin-resource-policy'), label).toBe('same-origin');
    }
  });

  it('give console pages a CSP without inline script or style, with Trusted Types, and the same framing rules', async () => {
    for (const path of ['/console/', '/console/accounts/x/keys', '/console/favicon.svg']) {
      const page = await fetch(`${setup.gateway.url}${path}`);
      expect(page.status, path).toBe(200);
      const policy = page.headers.get('content-security-policy') ?? '';
      const directives = new Map(
        policy.split(';').map((directive) => {
          const [name = '', ...values] = directive.trim().split(/\s+/);
          return [name, values.join(' ')] as const;
        }),
      );
      expect(directives.get('script-src'), path).toBe("'self'");
      expect(directives.get('style-src'), path).toBe("'self'");
      expect(directives.get('object-src'), path).toBe("'none'");
      expect(directives.get('base-uri'), path).toBe("'none'");
      expect(directives.get('frame-ancestors'), path).toBe("'none'");
      expect(directives.get('require-trusted-types-for'), path).toBe("'script'");
      expect(directives.get('trusted-types'), path).toBe("'none'");
      expect(policy, path).not.toContain('unsafe');
      expect(page.headers.get('x-frame-options'), path).toBe('DENY');
      expect(page.headers.get('x-content-type-options'), path).toBe('nosniff');
      expect(page.headers.get('referrer-policy'), path).toBe('no-referrer');
      expect(page.headers.get('cross-origin-opener-policy'), path).toBe('same-origin');
      expect(page.headers.get('cross-origin-resource-policy'), path).toBe('same-origin');
    }
  });
});
