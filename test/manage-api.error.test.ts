import { beforeAll, describe, expect, it } from 'vitest';
import { type ApiClient, accountId, apiRequest, createTestUser, signIn, testPassword } from './support/console.js';
import { useGatewayWithMock } from './support/gateway-fixture.js';

/** Bad input to the management API: a clear 4xx in the OpenAI error format naming the field, never a 500. */

const setup = useGatewayWithMock();

let owner: ApiClient;
let admin: ApiClient;
let acme: string;

beforeAll(async () => {
  acme = await accountId(setup.gateway, 'acme');
  await createTestUser(setup.gateway, { email: 'owner@acme.test', account: 'acme', role: 'owner' });
  await createTestUser(setup.gateway, { email: 'root@operator.test', admin: true });
  owner = await signIn(setup.gateway, 'owner@acme.test');
  admin = await signIn(setup.gateway, 'root@operator.test');
});

function expectError(
  response: { status: number; body: { error: Record<string, unknown> } },
  status: number,
  fields: Record<string, unknown> = {},
) {
  expect(response.status).toBe(status);
  expect(Object.keys(response.body.error).sort()).toEqual(['code', 'message', 'param', 'type']);
  expect(response.body.error).toMatchObject(fields);
  expect(String(response.body.error.message).length).toBeGreaterThan(5);
}

describe('validation', () => {
  it('names the field of an invalid body', async () => {
    expectError(await owner.request('POST', `/api/accounts/${acme}/keys`, { name: 42 }), 400, {
      type: 'invalid_request_error',
      param: 'name',
      code: 'invalid_value',
    });
    expectError(await owner.request('POST', `/api/accounts/${acme}/keys`, { name: '  ' }), 400, { param: 'name' });
    expectError(await owner.request('POST', `/api/accounts/${acme}/keys`, { name: 'x'.repeat(101) }), 400, {
      param: 'name',
    });
    expectError(
      await owner.request('POST', `/api/accounts/${acme}/keys/nope/rotate`, { gracePeriodSeconds: -1 }),
      400,
      { param: 'gracePeriodSeconds' },
    );
    expectError(await owner.request('POST', `/api/accounts/${acme}/keys`, { name: 'a', expiresAt: 'tomorrow' }), 400, {
      param: 'expiresAt',
    });
  });

  it('refuses unknown fields instead of ignoring a typo', async () => {
    const response = await owner.request('POST', `/api/accounts/${acme}/keys`, {
      name: 'a',
      expires_at: '2030-01-01T00:00:00Z',
    });
    expectError(response, 400, { param: 'expires_at' });
    expect(response.body.error.message).toContain('expires_at');
    const nested = await admin.request('PATCH', `/api/accounts/${acme}`, { limits: { rpm: 5 } });
    expectError(nested, 400, { param: 'limits.rpm' });
  });

  it('refuses a missing body, malformed JSON and non-JSON bodies', async () => {
    expectError(await owner.request('POST', `/api/accounts/${acme}/keys`), 400, { code: 'missing_body' });
    // An empty body labelled JSON is no body: refused where one is needed, accepted where none is.
    expectError(await owner.request('POST', `/api/accounts/${acme}/keys`, ''), 400, { code: 'missing_body' });
    const created = await owner.request('POST', `/api/accounts/${acme}/keys`, { name: 'empty-body' });
    const revoked = await owner.request('POST', `/api/accounts/${acme}/keys/${created.body.id}/revoke`, '');
    expect(revoked.status).toBe(200);
    expectError(await owner.request('POST', `/api/accounts/${acme}/keys`, '{"name": '), 400, { code: 'invalid_json' });
    expectError(
      await owner.request('POST', `/api/accounts/${acme}/keys`, 'name=x', { 'content-type': 'text/plain' }),
      415,
    );
  });

  it('refuses an expiry in the past and models the account may not use', async () => {
    expectError(
      await owner.request('POST', `/api/accounts/${acme}/keys`, { name: 'a', expiresAt: '2020-01-01T00:00:00Z' }),
      400,
      { param: 'expiresAt' },
    );
    const restricted = (await admin.request('POST', '/api/accounts', { name: 'small-co', models: ['mock'] })).body.id;
    expectError(
      await admin.request('POST', `/api/accounts/${restricted}/keys`, { name: 'a', models: ['tools'] }),
      400,
      {
        param: 'models',
        code: 'model_not_allowed',
      },
    );
    expectError(await admin.request('POST', `/api/accounts/${restricted}/keys`, { name: 'a', models: [] }), 400, {
      param: 'models',
    });
  });

  it('refuses bad log filters and cursors', async () => {
    expectError(await owner.request('GET', `/api/accounts/${acme}/logs?status=teapot`), 400, { param: 'status' });
    expectError(await owner.request('GET', `/api/accounts/${acme}/logs?limit=0`), 400, { param: 'limit' });
    expectError(await owner.request('GET', `/api/accounts/${acme}/logs?limit=201`), 400, { param: 'limit' });
    expectError(await owner.request('GET', `/api/accounts/${acme}/logs?limit=ten`), 400, { param: 'limit' });
    expectError(await owner.request('GET', `/api/accounts/${acme}/logs?cursor=garbage`), 400, { param: 'cursor' });
    expectError(await owner.request('GET', `/api/accounts/${acme}/logs?from=yesterday`), 400, { param: 'from' });
    expectError(await owner.request('GET', `/api/accounts/${acme}/logs?from=2000&to=1000`), 400, { param: 'from' });
    expectError(await owner.request('GET', `/api/accounts/${acme}/logs?colour=red`), 400);
    expectError(await owner.request('GET', `/api/accounts/${acme}/logs?key=a&key=b`), 400, { param: 'key' });
  });

  it('refuses usage ranges that are too long or reversed, and bad time zones', async () => {
    const to = Date.now();
    expectError(
      await owner.request('GET', `/api/accounts/${acme}/usage?bucket=hour&from=${to - 40 * 86_400_000}&to=${to}`),
      400,
    );
    expectError(await owner.request('GET', `/api/accounts/${acme}/usage?from=${to}&to=${to - 1000}`), 400, {
      param: 'from',
    });
    expectError(await owner.request('GET', `/api/accounts/${acme}/usage?bucket=week`), 400, { param: 'bucket' });
    expectError(await owner.request('GET', `/api/accounts/${acme}/usage?tzOffsetMinutes=9999`), 400, {
      param: 'tzOffsetMinutes',
    });
  });

  it('refuses invalid accounts, users, invitations and tokens', async () => {
    expectError(await admin.request('POST', '/api/accounts', { name: 'has space' }), 400, { param: 'name' });
    expectError(await admin.request('POST', '/api/accounts', { name: 'acme' }), 409, { code: 'account_exists' });
    expectError(await admin.request('POST', '/api/accounts', { name: 'x', models: ['no-such-model'] }), 400, {
      code: 'model_not_configured',
    });
    expectError(await admin.request('PATCH', `/api/accounts/${acme}`, {}), 400);
    expectError(await admin.request('POST', '/api/users', { email: 'not-an-email', password: testPassword }), 400, {
      code: 'invalid_email',
    });
    expectError(await admin.request('POST', '/api/users', { email: 'short@x.test', password: 'short' }), 400, {
      code: 'password_too_short',
    });
    expectError(await admin.request('POST', '/api/users', { email: 'owner@acme.test', password: testPassword }), 409, {
      code: 'user_exists',
    });
    expectError(
      await owner.request('POST', `/api/accounts/${acme}/invitations`, { email: 'x@y.test', role: 'boss' }),
      400,
      {
        param: 'role',
      },
    );
    expectError(await owner.request('POST', '/api/tokens', { name: '' }), 400, { param: 'name' });
    expectError(await owner.request('POST', '/api/tokens', { name: 'x', expiresInDays: 0 }), 400, {
      param: 'expiresInDays',
    });
    expectError(
      await owner.request('POST', '/api/session/password', { currentPassword: testPassword, newPassword: 'short' }),
      400,
      {
        code: 'password_too_short',
      },
    );
    expectError(
      await owner.request('POST', '/api/session/password', {
        currentPassword: 'wrong password',
        newPassword: 'long enough now',
      }),
      401,
      { code: 'invalid_credentials' },
    );
  });

  it('refuses a new user who picks a short password when accepting an invitation', async () => {
    const invited = await owner.request('POST', `/api/accounts/${acme}/invitations`, {
      email: 'late@acme.test',
      role: 'member',
    });
    const response = await apiRequest(setup.gateway.url, 'POST', '/api/invitations/accept', {
      body: { token: invited.body.token, password: 'short' },
    });
    expectError(response, 400, { code: 'password_too_short' });
    const preview = await apiRequest(setup.gateway.url, 'POST', '/api/invitations/preview', {
      body: { token: invited.body.token },
    });
    expect(preview.status).toBe(200);
    expectError(
      await apiRequest(setup.gateway.url, 'POST', '/api/invitations/preview', { body: { token: 'sbi_forged' } }),
      404,
      {
        code: 'invitation_invalid',
      },
    );
  });
});

describe('not found', () => {
  it('answers unknown ids and routes with 404 in the same format', async () => {
    expectError(await owner.request('GET', `/api/accounts/${acme}/keys/key_doesnotexist`), 404, {
      code: 'key_not_found',
    });
    expectError(await owner.request('POST', `/api/accounts/${acme}/keys/key_doesnotexist/revoke`), 404, {
      code: 'key_not_found',
    });
    expectError(await owner.request('GET', `/api/accounts/${acme}/logs/req_nothing`), 404, {
      code: 'request_not_found',
    });
    expectError(await owner.request('GET', '/api/accounts/acct_doesnotexist'), 404, { code: 'account_not_found' });
    expectError(await owner.request('DELETE', `/api/accounts/${acme}/members/user_nobody`), 404, {
      code: 'member_not_found',
    });
    expectError(await owner.request('DELETE', `/api/accounts/${acme}/invitations/invite_nothing`), 404, {
      code: 'invitation_not_found',
    });
    expectError(await owner.request('DELETE', '/api/tokens/mtok_nothing'), 404, { code: 'token_not_found' });
    expectError(await admin.request('PATCH', '/api/users/user_nobody', { admin: true }), 404, {
      code: 'user_not_found',
    });
    expectError(await owner.request('GET', '/api/nothing-here'), 404, { code: 'unknown_url' });
    expectError(await owner.request('PUT', `/api/accounts/${acme}/keys`, { name: 'x' }), 404);
  });

  it('answers overlong ids, and paths the router refuses, in the same format', async () => {
    expectError(await owner.request('DELETE', `/api/tokens/${'x'.repeat(300)}`), 400, { param: 'tokenId' });
    expectError(await owner.request('DELETE', `/api/tokens/${'x'.repeat(2000)}`), 400, {
      type: 'invalid_request_error',
    });
    expectError(await owner.request('GET', '/api/accounts/%E0%A4%A'), 400, { type: 'invalid_request_error' });
  });

  it('refuses to rotate a revoked key', async () => {
    const created = await owner.request('POST', `/api/accounts/${acme}/keys`, { name: 'gone' });
    await owner.request('POST', `/api/accounts/${acme}/keys/${created.body.id}/revoke`);
    expectError(
      await owner.request('POST', `/api/accounts/${acme}/keys/${created.body.id}/rotate`, { gracePeriodSeconds: 0 }),
      400,
      { code: 'key_inactive' },
    );
  });

  it('refuses to rotate a key that was already rotated, naming its successor', async () => {
    const created = await owner.request('POST', `/api/accounts/${acme}/keys`, { name: 'twice' });
    const rotate = () =>
      owner.request('POST', `/api/accounts/${acme}/keys/${created.body.id}/rotate`, { gracePeriodSeconds: 60 });
    const first = await rotate();
    expect(first.status).toBe(200);
    const second = await rotate();
    expectError(second, 409, { code: 'key_already_rotated', param: 'key_id' });
    expect(second.body.error.message).toContain(first.body.id);
  });
});

describe('robustness', () => {
  it('never answers 500 to hostile input', async () => {
    const hostile = [
      `/api/accounts/${encodeURIComponent("' or 1=1 --")}/keys`,
      `/api/accounts/${acme}/logs?model=${encodeURIComponent("'; drop table request_log; --")}`,
      `/api/accounts/${acme}/logs?endpoint=${encodeURIComponent("'; drop table request_log; --")}`,
      `/api/accounts/${acme}/logs?endpoint=${'a'.repeat(10_000)}`,
      `/api/accounts/${acme}/logs/${'x'.repeat(101)}`,
      `/api/accounts/${acme}/logs?cursor=${Buffer.from('999999999999999.999999999999999').toString('base64url')}`,
      `/api/accounts/${'%00'}/keys`,
    ];
    for (const path of hostile) {
      const response = await owner.request('GET', path);
      expect(response.status, path).toBeGreaterThanOrEqual(200);
      expect(response.status, path).toBeLessThan(500);
    }
    const huge = await owner.request('POST', `/api/accounts/${acme}/keys`, { name: 'x'.repeat(2_000_000) });
    expect(huge.status).toBe(413);
    const rows = await setup.gateway.gateway.database.db.selectFrom('request_log').select('id').execute();
    expect(Array.isArray(rows)).toBe(true);
  });
});

describe('concurrent requests', () => {
  /** Each distinct outcome (status and error code) and how many requests got it. */
  function outcomes(responses: Array<{ status: number; body: { error?: { code?: string } } }>) {
    const counts: Record<string, number> = {};
    for (const response of responses) {
      const outcome = `${response.status}${response.body.error ? ` ${response.body.error.code}` : ''}`;
      counts[outcome] = (counts[outcome] ?? 0) + 1;
    }
    return counts;
  }

  it('creates a user or an account once when the same one is asked for many times at once, and 409s the others', async () => {
    const users = await Promise.all(
      Array.from({ length: 8 }, () =>
        admin.request('POST', '/api/users', { email: 'twice@operator.test', password: testPassword }),
      ),
    );
    expect(outcomes(users)).toEqual({ 201: 1, '409 user_exists': 7 });
    const accounts = await Promise.all(
      Array.from({ length: 8 }, () => admin.request('POST', '/api/accounts', { name: 'raced' })),
    );
    expect(outcomes(accounts)).toEqual({ 201: 1, '409 account_exists': 7 });
  });

  it('rotates a key once when it is asked to many times at once: one successor, the others 409', async () => {
    const created = await owner.request('POST', `/api/accounts/${acme}/keys`, { name: 'raced-rotation' });
    const rotations = await Promise.all(
      Array.from({ length: 8 }, () =>
        owner.request('POST', `/api/accounts/${acme}/keys/${created.body.id}/rotate`, { gracePeriodSeconds: 60 }),
      ),
    );
    expect(outcomes(rotations)).toEqual({ 200: 1, '409 key_already_rotated': 7 });
    const keys = (await owner.request('GET', `/api/accounts/${acme}/keys`)).body as unknown as Array<{
      name: string;
      status: string;
    }>;
    expect(
      keys
        .filter((key) => key.name === 'raced-rotation')
        .map((key) => key.status)
        .sort(),
    ).toEqual(['active', 'expiring']);
  });
});
