import { beforeAll, describe, expect, it } from 'vitest';
import { type ApiClient, accountId, createTestUser, signIn } from './support/console.js';
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
