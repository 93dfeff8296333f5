import { beforeAll, describe, expect, it } from 'vitest';
import { managementRoutes } from '../src/api/manage/index.js';
import { type ApiClient, accountId, createTestUser, signIn } from './support/console.js';
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
