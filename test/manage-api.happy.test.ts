import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { managementRoutes } from '../src/api/manage/index.js';
import { latencyBucketBounds, latencyBucketOf } from '../src/db/usage-rollup-layout.js';
import { isWellFormedKey } from '../src/keys/format.js';
import { projectRoot } from './support/cli.js';
import {
  type ApiClient,
  accountId,
  anonymousClient,
  apiRequest,
  createTestUser,
  expectDocumentedResponse,
  signIn,
  testPassword,
  tokenClient,
} from './support/console.js';
import { chatBody, jsonOf, waitForLogRows } from './support/gateway.js';
import { useGatewayWithMock } from './support/gateway-fixture.js';

/** The management API used as the console and scripts use it: every area's normal paths. */

const setup = useGatewayWithMock();

let owner: ApiClient;
let admin: ApiClient;
let acme: string;

async function chat(key: string, model = 'mock', extra: Record<string, unknown> = {}) {
  const response = await fetch(`${setup.gateway.baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(chatBody(model, extra)),
  });
  await response.arrayBuffer();
  return { status: response.status, requestId: response.headers.get('x-request-id') ?? '', headers: response.headers };
}

beforeAll(async () => {
  acme = await accountId(setup.gateway, 'acme');
  await createTestUser(setup.gateway, { email: 'owner@acme.test', account: 'acme', role: 'owner' });
  await createTestUser(setup.gateway, { email: 'root@operator.test', admin: true });
  owner = await signIn(setup.gateway, 'owner@acme.test');
  admin = await signIn(setup.gateway, 'root@operator.test');
});

describe('session', () => {
  it('signs in with an HttpOnly, SameSite=Strict session cookie scoped to /api and returns the CSRF token', async () => {
    const response = await apiRequest(setup.gateway.url, 'POST', '/api/session', {
      body: { email: 'Owner@Acme.test ', password: testPassword },
    });
    expect(response.status).toBe(200);
    const cookie = response.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(/^switchboard_session=sbs_[\w-]{43}; /);
    expect(cookie).toContain('HttpOnly');
    expect(cookie).toContain('SameSite=Strict');
    expect(cookie).toContain('Path=/api');
    expect(cookie).toMatch(/Max-Age=604800/);
    expect(cookie).not.toContain('Secure');
    expect(response.headers.get('cache-control')).toBe('no-store');
    expectDocumentedResponse('POST', '/api/session', response.body);
    expect(response.body.user).toMatchObject({ email: 'owner@acme.test', admin: false });
    expect(response.body.memberships).toEqual([
      { accountId: acme, accountName: 'acme', role: 'owner', accountDisabled: false },
    ]);
  });

  it('reports the current session', async () => {
    const response = await owner.request('GET', '/api/session');
    expect(response.status).toBe(200);
    expectDocumentedResponse('GET', '/api/session', response.body);
    expect(response.body.csrfToken).toBe(owner.csrfToken);
    expect(Date.parse(response.body.expiresAt)).toBeGreaterThan(Date.now());
  });

  it('signs out: the cookie is cleared and the old one no longer works', async () => {
    const client = await signIn(setup.gateway, 'owner@acme.test');
    const out = await client.request('DELETE', '/api/session');
    expect(out.status).toBe(204);
    expect(out.headers.get('set-cookie')).toMatch(/switchboard_session=; .*Max-Age=0/);
    const after = await client.request('GET', '/api/accounts');
    expect(after.status).toBe(401);
    expect(after.body.error.code).toBe('not_signed_in');
  });

  it('changes the password, ending the other sessions and replacing this one, and says so', async () => {
    await createTestUser(setup.gateway, { email: 'changer@acme.test', account: 'acme' });
    const here = await signIn(setup.gateway, 'changer@acme.test');
    const elsewhere = await signIn(setup.gateway, 'changer@acme.test');
    const changed = await here.request('POST', '/api/session/password', {
      currentPassword: testPassword,
      newPassword: 'a brand new password',
    });
    expect(changed.status).toBe(200);
    expectDocumentedResponse('POST', '/api/session/password', changed.body);
    expect(changed.body).toMatchObject({ sessionsEnded: 1, managementTokensRevoked: 0 });
    expect(changed.body.message).toBe('Password changed; 1 other session ended and 0 management tokens revoked.');
    const fresh = /switchboard_session=([^;]+)/.exec(changed.headers.get('set-cookie') ?? '')?.[1];
    const replaced = await apiRequest(setup.gateway.url, 'GET', '/api/session', {
      headers: { cookie: `switchboard_session=${fresh}` },
    });
    expect(replaced.status).toBe(200);
    expect(replaced.body.csrfToken).toBe(changed.body.csrfToken);
    expect((await here.request('GET', '/api/session')).status).toBe(401);
    expect((await elsewhere.request('GET', '/api/session')).status).toBe(401);
    await signIn(setup.gateway, 'changer@acme.test', 'a brand new password');
    await expect(signIn(setup.gateway, 'changer@acme.test')).rejects.toThrow(/401/);
  });
});

describe('keys', () => {
  it('creates a key shown once, which works on /v1 at once and is listed only in display form', async () => {
    const created = await owner.request('POST', `/api/accounts/${acme}/keys`, {
      name: 'checkout',
      environment: 'production',
    });
    expect(created.status).toBe(201);
    expectDocumentedResponse('POST', '/api/accounts/:accountId/keys', created.body);
    expect(isWellFormedKey(created.body.key)).toBe(true);
    expect(created.body).toMatchObject({ name: 'checkout', environment: 'production', status: 'active', models: null });
    expect(created.body.display).toBe(`sk-sb-…${created.body.key.slice(-4)}`);
    expect((await chat(created.body.key)).status).toBe(200);

    const list = await owner.request('GET', `/api/accounts/${acme}/keys`);
    expect(list.status).toBe(200);
    expectDocumentedResponse('GET', '/api/accounts/:accountId/keys', list.body);
    expect(JSON.stringify(list.body)).not.toContain(created.body.key);
    const listed = list.body.find((key: { id: string }) => key.id === created.body.id);
    expect(listed).toMatchObject({ display: created.body.display, status: 'active' });

    const one = await owner.request('GET', `/api/accounts/${acme}/keys/${created.body.id}`);
    expectDocumentedResponse('GET', '/api/accounts/:accountId/keys/:keyId', one.body);
    expect(one.body).toEqual({ ...listed, lastUsedAt: one.body.lastUsedAt });
  });

  it('creates a key with an expiry and a narrower model list, which /v1/models honours', async () => {
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    const created = await owner.request('POST', `/api/accounts/${acme}/keys`, {
      name: 'narrow',
      models: ['mock', 'gpt-4o-mini'],
      expiresAt,
    });
    expect(created.status).toBe(201);
    expect(created.body.models).toEqual(['mock', 'gpt-4o-mini']);
    expect(Math.abs(Date.parse(created.body.expiresAt) - Date.parse(expiresAt))).toBeLessThan(1000);
    const models = await fetch(`${setup.gateway.baseUrl}/models`, {
      headers: { authorization: `Bearer ${created.body.key}` },
    });
    const ids = (await jsonOf(models)).data.map((model: { id: string }) => model.id);
    expect(ids.sort()).toEqual(['gpt-4o-mini', 'mock']);
    expect((await chat(created.body.key, 'tools')).status).toBe(404);
  });

  it('rotates with a grace period: both keys work, and the old one carries the grace expiry', async () => {
    const created = await owner.request('POST', `/api/accounts/${acme}/keys`, { name: 'rotating' });
    const rotated = await owner.request('POST', `/api/accounts/${acme}/keys/${created.body.id}/rotate`, {
      gracePeriodSeconds: 3600,
    });
    expect(rotated.status).toBe(200);
    expectDocumentedResponse('POST', '/api/accounts/:accountId/keys/:keyId/rotate', rotated.body);
    expect(rotated.body.key).not.toBe(created.body.key);
    expect(rotated.body.name).toBe('rotating');
    expect(rotated.body.previous).toMatchObject({
      id: created.body.id,
      status: 'expiring',
      replacedBy: rotated.body.id,
    });
    expect(Date.parse(rotated.body.previous.expiresAt) - Date.now()).toBeGreaterThan(3500_000);
    expect((await chat(rotated.body.key)).status).toBe(200);
    expect((await chat(created.body.key)).status).toBe(200);
  });

  it('rotates an exposed key with no grace: the old key is refused at once', async () => {
    const created = await owner.request('POST', `/api/accounts/${acme}/keys`, { name: 'exposed' });
    expect((await chat(created.body.key)).status).toBe(200);
    const rotated = await owner.request('POST', `/api/accounts/${acme}/keys/${created.body.id}/rotate`, {
      gracePeriodSeconds: 0,
    });
    expect(rotated.status).toBe(200);
    expect((await chat(created.body.key)).status).toBe(401);
    expect((await chat(rotated.body.key)).status).toBe(200);
  });

  it('revokes a key: refused on the data plane at once, idempotent, listed as revoked', async () => {
    const created = await owner.request('POST', `/api/accounts/${acme}/keys`, { name: 'doomed' });
    expect((await chat(created.body.key)).status).toBe(200);
    const revoked = await owner.request('POST', `/api/accounts/${acme}/keys/${created.body.id}/revoke`);
    expect(revoked.status).toBe(200);
    expectDocumentedResponse('POST', '/api/accounts/:accountId/keys/:keyId/revoke', revoked.body);
    expect(revoked.body.status).toBe('revoked');
    const refused = await fetch(`${setup.gateway.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${created.body.key}`, 'content-type': 'application/json' },
      body: JSON.stringify(chatBody('mock')),
    });
    expect(refused.status).toBe(401);
    expect((await jsonOf(refused)).error.message).toContain('revoked');
    const again = await owner.request('POST', `/api/accounts/${acme}/keys/${created.body.id}/revoke`);
    expect(again.body.revokedAt).toBe(revoked.body.revokedAt);
  });

  it("sets a key's limits, which the data plane applies at once, and removes them again", async () => {
    const created = await owner.request('POST', `/api/accounts/${acme}/keys`, { name: 'metered' });
    const limited = await owner.request('PATCH', `/api/accounts/${acme}/keys/${created.body.id}/limits`, {
      requestsPerMinute: 1,
    });
    expect(limited.status).toBe(200);
    expectDocumentedResponse('PATCH', '/api/accounts/:accountId/keys/:keyId/limits', limited.body);
    expect(limited.body.limits).toEqual({ requestsPerMinute: 1 });
    expect((await chat(created.body.key)).status).toBe(200);
    const refused = await chat(created.body.key);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('x-ratelimit-limit-requests')).toBe('1');
    const lifted = await owner.request('PATCH', `/api/accounts/${acme}/keys/${created.body.id}/limits`, {
      requestsPerMinute: null,
    });
    expect(lifted.body.limits).toEqual({ requestsPerMinute: null });
    expect((await chat(created.body.key)).status).toBe(200);
    const invalid = await owner.request('PATCH', `/api/accounts/${acme}/keys/${created.body.id}/limits`, {
      requestsPerMinute: 0,
    });
    expect(invalid.status).toBe(400);
  });
});

describe('request log', () => {
  let logAccount: string;
  let alpha: { key: string; id: string };
  let beta: { key: string; id: string };
  let reader: ApiClient;
  const requestIds: string[] = [];

  beforeAll(async () => {
    const created = await admin.request('POST', '/api/accounts', { name: 'logs-co' });
    logAccount = created.body.id;
    await createTestUser(setup.gateway, { email: 'reader@logs.test', account: 'logs-co', role: 'member' });
    reader = await signIn(setup.gateway, 'reader@logs.test');
    const first = await reader.request('POST', `/api/accounts/${logAccount}/keys`, { name: 'alpha' });
    const second = await reader.request('POST', `/api/accounts/${logAccount}/keys`, { name: 'beta' });
    alpha = { key: first.body.key, id: first.body.id };
    beta = { key: second.body.key, id: second.body.id };
    const plan: Array<[{ key: string }, string]> = [
      [alpha, 'mock'],
      [alpha, 'mock'],
      [beta, 'gpt-4o-mini'],
      [alpha, 'error-400'],
      [beta, 'error-500'],
      [beta, 'mock'],
      [alpha, 'gpt-4o-mini'],
      [beta, 'no-such-model'],
    ];
    for (const [key, model] of plan) requestIds.push((await chat(key.key, model)).requestId);
    await waitForLogRows(setup.gateway, requestIds);
  });

  it('lists newest first and pages with the cursor through every row exactly once', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = `?limit=3${cursor ? `&cursor=${cursor}` : ''}`;
      const page = await reader.request('GET', `/api/accounts/${logAccount}/logs${query}`);
      expect(page.status).toBe(200);
      expectDocumentedResponse('GET', '/api/accounts/:accountId/logs', page.body);
      expect(page.body.data.length).toBeLessThanOrEqual(3);
      seen.push(...page.body.data.map((entry: { requestId: string }) => entry.requestId));
      cursor = page.body.nextCursor;
      pages++;
    } while (cursor && pages < 10);
    expect(seen).toEqual([...requestIds].reverse());
    expect(pages).toBe(3);
  });

  it('shows each row with key name, model, status, latency, tokens and cost', async () => {
    const page = await reader.request('GET', `/api/accounts/${logAccount}/logs?limit=50`);
    const first = page.body.data.find((entry: { requestId: string }) => entry.requestId === requestIds[0]);
    expect(first).toMatchObject({
      keyName: 'alpha',
      keyId: alpha.id,
      model: 'mock',
      status: 200,
      outcome: 'success',
      usage: { promptTokens: expect.any(Number), completionTokens: expect.any(Number) },
    });
    expect(first.latencyMs).toBeGreaterThanOrEqual(0);
    expect(first.costUsd).toBeGreaterThan(0);
    const failed = page.body.data.find((entry: { requestId: string }) => entry.requestId === requestIds[4]);
    expect(failed).toMatchObject({ status: 502, outcome: 'error', error: { type: 'server_error' } });
  });

  it("brings the keys of its rows and their namesakes, not the account's other keys", async () => {
    const namesake = await reader.request('POST', `/api/accounts/${logAccount}/keys`, { name: 'alpha' });
    const unused = await reader.request('POST', `/api/accounts/${logAccount}/keys`, { name: 'gamma' });
    const page = await reader.request('GET', `/api/accounts/${logAccount}/logs?key=${alpha.id}`);
    expectDocumentedResponse('GET', '/api/accounts/:accountId/logs', page.body);
    const keys = page.body.keys as Array<{ id: string; name: string; display: string }>;
    expect(keys.map((key) => key.id).sort()).toEqual([alpha.id, namesake.body.id].sort());
    expect(keys.map((key) => key.id)).not.toContain(unused.body.id);
    expect(keys.every((key) => key.name === 'alpha' && key.display.length > 0)).toBe(true);
    expect(JSON.stringify(keys)).not.toContain(alpha.key);
  });

  it('filters by key, model, status class and time range', async () => {
    const ids = async (query: string) =>
      (await reader.request('GET', `/api/accounts/${logAccount}/logs?${query}`)).body.data
        .map((entry: { requestId: string }) => entry.requestId)
        .reverse();
    const at = (...indexes: number[]) => indexes.map((index) => requestIds[index]);
    expect(await ids(`key=${alpha.id}`)).toEqual(at(0, 1, 3, 6));
    expect(await ids(`key=${beta.id}`)).toEqual(at(2, 4, 5, 7));
    expect(await ids('model=gpt-4o-mini')).toEqual(at(2, 6));
    expect(await ids('status=success')).toEqual(at(0, 1, 2, 5, 6));
    expect(await ids('status=error')).toEqual(at(3, 4, 7));
    expect(await ids('status=client_error')).toEqual(at(3, 7));
    expect(await ids('status=server_error')).toEqual(at(4));
    expect(await ids(`key=${beta.id}&status=success&model=mock`)).toEqual(at(5));
    const all = (await reader.request('GET', `/api/accounts/${logAccount}/logs`)).body.data;
    const third = Date.parse(all[all.length - 3].time);
    expect(await ids(`from=${new Date(third).toISOString()}`)).toEqual(
      all
        .filter((entry: { time: string }) => Date.parse(entry.time) >= third)
        .map((entry: { requestId: string }) => entry.requestId)
        .reverse(),
    );
    expect(await ids(`to=${third}`)).toEqual(
      all
        .filter((entry: { time: string }) => Date.parse(entry.time) < third)
        .map((entry: { requestId: string }) => entry.requestId)
        .reverse(),
    );
    expect(await ids(`from=${Date.now() + 60_000}`)).toEqual([]);
  });

  it('filters by provider, key environment, minimum latency and request id, and exports what it filters', async () => {
    const account = (await admin.request('POST', '/api/accounts', { name: 'filters-co' })).body.id;
    const production = await admin.request('POST', `/api/accounts/${account}/keys`, {
      name: 'gamma',
      environment: 'production',
    });
    const plain = await admin.request('POST', `/api/accounts/${account}/keys`, { name: 'delta' });
    const served: string[] = [];
    for (const [key, model] of [
      [production.body.key, 'mock'],
      [plain.body.key, 'mock'],
      [production.body.key, 'mock'],
      [plain.body.key, 'no-such-model'],
      [plain.body.key, 'gpt-4o-mini'],
    ] as const) {
      served.push((await chat(key, model)).requestId);
    }
    await waitForLogRows(setup.gateway, served);
    const at = (...indexes: number[]) => indexes.map((index) => served[index]);
    const entries = async (query: string) =>
      (await admin.request('GET', `/api/accounts/${account}/logs?${query}`)).body.data as Array<{
        requestId: string;
        provider: string | null;
        latencyMs: number;
      }>;
    const ids = async (query: string) => (await entries(query)).map((entry) => entry.requestId).reverse();
    const all = await entries('limit=200');
    expect(await ids('environment=production')).toEqual(at(0, 2));
    expect(await ids('environment=staging')).toEqual([]);
    expect(await ids('provider=mock')).toEqual(at(0, 1, 2, 4));
    const threshold = [...all.map((entry) => entry.latencyMs)].sort((first, second) => first - second)[2] as number;
    expect(await ids(`minLatencyMs=${threshold}`)).toEqual(
      all
        .filter((entry) => entry.latencyMs >= threshold)
        .map((entry) => entry.requestId)
        .reverse(),
    );
    expect(await ids(`requestId=${served[1]}`)).toEqual(at(1));
    expect(await ids(`requestId=${served[1]}&environment=production`)).toEqual([]);
    expect(await ids(`requestId=${requestIds[0]}`)).toEqual([]);
    const everywhere = await admin.request('GET', `/api/logs?requestId=${requestIds[0]}`);
    expect(everywhere.body.data.map((entry: { accountId: string }) => entry.accountId)).toEqual([logAccount]);
    const bad = await admin.request('GET', `/api/accounts/${account}/logs?minLatencyMs=-5`);
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe('minLatencyMs');

    const exported = await admin.request('GET', `/api/accounts/${account}/logs/export?format=jsonl&provider=mock`);
    expect(exported.status).toBe(200);
    expect(exported.headers.get('content-type')).toContain('application/x-ndjson');
    const lines = String(exported.body).trim().split('\n');
    expect(lines.map((line) => (JSON.parse(line) as { requestId: string }).requestId)).toEqual(at(4, 2, 1, 0));
    const csv = await admin.request('GET', `/api/logs/export?format=csv&account=${account}&environment=production`);
    expect(String(csv.body).trim().split('\n')).toHaveLength(3);
    const document = (await anonymousClient(setup.gateway).request('GET', '/api/openapi.json')).body;
    expect(Object.keys(document.paths['/api/accounts/{accountId}/logs/export'].get.responses['200'].content)).toEqual([
      'text/csv',
      'application/x-ndjson',
    ]);
  });

  it('records and filters the endpoint each request was served by', async () => {
    const account = (await admin.request('POST', '/api/accounts', { name: 'endpoints-co' })).body.id;
    const key = (await admin.request('POST', `/api/accounts/${account}/keys`, { name: 'app' })).body.key;
    const get = async (path: string) => {
      const response = await fetch(`${setup.gateway.baseUrl}${path}`, { headers: { authorization: `Bearer ${key}` } });
      expect(response.status).toBe(200);
      return response.headers.get('x-request-id') as string;
    };
    const served = [
      (await chat(key, 'mock')).requestId,
      await get('/models'),
      await get('/models/mock'),
      (await chat(key, 'gpt-4o-mini')).requestId,
    ];
    await waitForLogRows(setup.gateway, served);
    const ids = async (query: string) => {
      const page = await admin.request('GET', `/api/accounts/${account}/logs${query}`);
      expect(page.status).toBe(200);
      expectDocumentedResponse('GET', '/api/accounts/:accountId/logs', page.body);
      return page.body.data.map((entry: { requestId: string }) => entry.requestId).reverse();
    };
    expect(await ids('?endpoint=chat_completions')).toEqual([served[0], served[3]]);
    expect(await ids('?endpoint=models')).toEqual([served[1]]);
    expect(await ids('?endpoint=model')).toEqual([served[2]]);
    expect(await ids('?endpoint=embeddings')).toEqual([]);
    const all = (await admin.request('GET', `/api/accounts/${account}/logs`)).body.data;
    expect(all.map((entry: { endpoint: string }) => entry.endpoint)).toEqual([
      'chat_completions',
      'model',
      'models',
      'chat_completions',
    ]);
    const admins = await admin.request('GET', `/api/logs?account=${account}&endpoint=models`);
    expect(admins.body.data.map((entry: { requestId: string }) => entry.requestId)).toEqual([served[1]]);
    const detail = await admin.request('GET', `/api/accounts/${account}/logs/${served[2]}`);
    expect(detail.body.endpoint).toBe('model');
    const invalid = await admin.request(
      'GET',
      `/api/accounts/${account}/logs?endpoint=${encodeURIComponent('Chat; --')}`,
    );
    expect(invalid.status).toBe(400);
    expect(invalid.body.error.param).toBe('endpoint');
    // A well-formed name that is no endpoint (a typo) is refused too, naming the ones there are, not answered empty.
    const typo = await admin.request('GET', `/api/accounts/${account}/logs?endpoint=chat`);
    expect(typo.status).toBe(400);
    expect(typo.body.error.param).toBe('endpoint');
    expect(typo.body.error.message).toContain('chat_completions');
  });

  it('shows one request in full; bodies only when the operator turned body logging on', async () => {
    const detail = await reader.request('GET', `/api/accounts/${logAccount}/logs/${requestIds[0]}`);
    expect(detail.status).toBe(200);
    expectDocumentedResponse('GET', '/api/accounts/:accountId/logs/:requestId', detail.body);
    expect(detail.body).toMatchObject({
      requestId: requestIds[0],
      bodiesLogged: false,
      requestBody: null,
      responseBody: null,
    });

    const enabled = await admin.request('PATCH', `/api/accounts/${logAccount}`, { logBodies: true });
    expect(enabled.body.logBodies).toBe(true);
    const { requestId } = await chat(alpha.key, 'mock', { messages: [{ role: 'user', content: 'remember this' }] });
    await waitForLogRows(setup.gateway, [requestId]);
    const withBodies = await reader.request('GET', `/api/accounts/${logAccount}/logs/${requestId}`);
    expect(withBodies.body.bodiesLogged).toBe(true);
    expect(JSON.parse(withBodies.body.requestBody).messages[0].content).toBe('remember this');
    expect(JSON.parse(withBodies.body.responseBody).object).toBe('chat.completion');
    const list = await reader.request('GET', `/api/accounts/${logAccount}/logs?limit=1`);
    expect(list.body.data[0].requestId).toBe(requestId);
    expect(list.body.data[0]).not.toHaveProperty('requestBody');
    await admin.request('PATCH', `/api/accounts/${logAccount}`, { logBodies: false });
    requestIds.push(requestId);
  });

  it('gives admins the log across accounts, filterable by account', async () => {
    const all = await admin.request('GET', '/api/logs?limit=200');
    expect(all.status).toBe(200);
    expectDocumentedResponse('GET', '/api/logs', all.body);
    const accounts = new Set(all.body.data.map((entry: { accountId: string }) => entry.accountId));
    expect(accounts.has(acme)).toBe(true);
    expect(accounts.has(logAccount)).toBe(true);
    const one = await admin.request('GET', `/api/logs?account=${logAccount}&limit=200`);
    expect(one.body.data.map((entry: { requestId: string }) => entry.requestId)).toEqual([...requestIds].reverse());
    const detail = await admin.request('GET', `/api/logs/${requestIds[0]}`);
    expectDocumentedResponse('GET', '/api/logs/:requestId', detail.body);
    expect(detail.body.accountId).toBe(logAccount);
  });

  it('usage agrees with the log: totals, per key, per model, and latency percentiles to within their bucket', async () => {
    const log = (await reader.request('GET', `/api/accounts/${logAccount}/logs?limit=200`)).body.data as Array<{
      keyId: string;
      model: string;
      outcome: string;
      latencyMs: number;
      usage: { promptTokens: number | null; completionTokens: number | null; totalTokens: number | null };
      costUsd: number | null;
    }>;
    const from = new Date(Date.now() - 3_600_000).toISOString();
    const to = new Date(Date.now() + 60_000).toISOString();
    const usage = await reader.request('GET', `/api/accounts/${logAccount}/usage?from=${from}&to=${to}&bucket=hour`);
    expect(usage.status).toBe(200);
    expectDocumentedResponse('GET', '/api/accounts/:accountId/usage', usage.body);
    const sum = (rows: typeof log, pick: (row: (typeof log)[number]) => number | null) =>
      rows.reduce((total, row) => total + (pick(row) ?? 0), 0);
    const nearestRank = (values: number[], percentile: number) => {
      const sorted = [...values].sort((first, second) => first - second);
      return sorted[Math.ceil((percentile / 100) * sorted.length) - 1] ?? null;
    };
    const successes = log.filter((row) => row.outcome === 'success').map((row) => row.latencyMs);
    // Percentiles come from the rollups' latency histogram: within the bucket of the exact value.
    const withinBucket = (actual: number | null, exact: number | null) => {
      if (exact === null) return expect(actual).toBeNull();
      const index = latencyBucketOf(exact);
      expect(actual).toBeGreaterThanOrEqual(index === 0 ? 0 : (latencyBucketBounds[index - 1] as number));
      expect(actual).toBeLessThanOrEqual(latencyBucketBounds[index] ?? Number.POSITIVE_INFINITY);
    };
    expect(usage.body.totals).toMatchObject({
      requests: log.length,
      errors: log.filter((row) => row.outcome === 'error').length,
      promptTokens: sum(log, (row) => row.usage.promptTokens),
      completionTokens: sum(log, (row) => row.usage.completionTokens),
      totalTokens: sum(log, (row) => row.usage.totalTokens),
    });
    withinBucket(usage.body.totals.latencyP50Ms, nearestRank(successes, 50));
    withinBucket(usage.body.totals.latencyP95Ms, nearestRank(successes, 95));
    expect(usage.body.totals.costUsd).toBeCloseTo(
      sum(log, (row) => row.costUsd),
      10,
    );
    const points = usage.body.series[0].points as Array<{ requests: number }>;
    expect(points.reduce((total, point) => total + point.requests, 0)).toBe(log.length);
    expect(points.length).toBeGreaterThanOrEqual(2);

    const perKey = await reader.request('GET', `/api/accounts/${logAccount}/usage?from=${from}&to=${to}&groupBy=key`);
    expectDocumentedResponse('GET', '/api/accounts/:accountId/usage', perKey.body);
    const byKey = Object.fromEntries(
      perKey.body.series.map((series: { id: string; name: string; totals: { requests: number } }) => [
        series.name,
        series.totals.requests,
      ]),
    );
    expect(byKey).toEqual({
      alpha: log.filter((row) => row.keyId === alpha.id).length,
      beta: log.filter((row) => row.keyId === beta.id).length,
    });
    const perModel = await reader.request(
      'GET',
      `/api/accounts/${logAccount}/usage?from=${from}&to=${to}&groupBy=model&bucket=day`,
    );
    const mockSeries = perModel.body.series.find((series: { id: string }) => series.id === 'mock');
    const mockRows = log.filter((row) => row.model === 'mock');
    expect(mockSeries.totals.requests).toBe(mockRows.length);
    withinBucket(
      mockSeries.totals.latencyP95Ms,
      nearestRank(
        mockRows.filter((row) => row.outcome === 'success').map((row) => row.latencyMs),
        95,
      ),
    );
    expect(perModel.body.bucket).toBe('day');
  });

  it("gives each key's and each account's spend, and budgets with the period's spend and reset time", async () => {
    const log = (await reader.request('GET', `/api/accounts/${logAccount}/logs?limit=200`)).body.data as Array<{
      keyId: string;
      costUsd: number | null;
    }>;
    const spent = (keyId?: string) =>
      log
        .filter((row) => keyId === undefined || row.keyId === keyId)
        .reduce((total, row) => total + (row.costUsd ?? 0), 0);
    const keys = await reader.request('GET', `/api/accounts/${logAccount}/usage/keys`);
    expect(keys.status).toBe(200);
    expectDocumentedResponse('GET', '/api/accounts/:accountId/usage/keys', keys.body);
    const alphaUsage = keys.body.keys.find((key: { keyId: string }) => key.keyId === alpha.id);
    expect(alphaUsage).toMatchObject({ name: 'alpha', requests: log.filter((row) => row.keyId === alpha.id).length });
    expect(alphaUsage.costUsd).toBeCloseTo(spent(alpha.id), 10);

    const accounts = await admin.request('GET', '/api/usage/accounts?days=7');
    expect(accounts.status).toBe(200);
    expectDocumentedResponse('GET', '/api/usage/accounts', accounts.body);
    const mine = accounts.body.accounts.find((account: { accountId: string }) => account.accountId === logAccount);
    expect(mine).toMatchObject({ name: 'logs-co', requests: log.length, disabled: false });
    expect(mine.costUsd).toBeCloseTo(spent(), 10);
    expect((await reader.request('GET', '/api/usage/accounts')).status).toBe(403);

    const overview = await admin.request('GET', '/api/usage?groupBy=account&bucket=day');
    expectDocumentedResponse('GET', '/api/usage', overview.body);
    const series = overview.body.series.find((item: { id: string }) => item.id === logAccount);
    expect(series).toMatchObject({ name: 'logs-co', totals: { requests: log.length } });

    const table = await reader.request(
      'GET',
      `/api/accounts/${logAccount}/usage/export?bucket=day&groupBy=key&format=csv`,
    );
    expect(table.status).toBe(200);
    expect(table.headers.get('content-disposition')).toMatch(/filename="switchboard-usage-logs-co-.*\.csv"/);
    const tableLines = String(table.body).trim().split('\n');
    // Every text field in double quotes (a spreadsheet splitting at ';' must not start a cell inside one).
    expect(tableLines[0]).toBe(
      '"start","group_id","group","requests","errors","cancelled","prompt_tokens","completion_tokens","total_tokens","cost_usd","latency_p50_ms","latency_p95_ms"',
    );
    // Two keys, 31 days each (30 days back from now, widened to whole days).
    expect(tableLines).toHaveLength(1 + 2 * 31);
    const requestsColumn = tableLines.slice(1).reduce((total, line) => total + Number(line.split(',')[3]), 0);
    expect(requestsColumn).toBe(log.length);
    const everyone = await admin.request('GET', '/api/usage/export?groupBy=account&format=jsonl&bucket=day');
    const mineLines = String(everyone.body)
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { groupId: string; requests: number })
      .filter((line) => line.groupId === logAccount);
    expect(mineLines.reduce((total, line) => total + line.requests, 0)).toBe(log.length);

    expect(
      (
        await admin.request('PATCH', `/api/accounts/${logAccount}`, {
          limits: { dailyBudgetUsd: 5, monthlyBudgetUsd: 50 },
        })
      ).status,
    ).toBe(200);
    expect(
      (await admin.request('PATCH', `/api/accounts/${logAccount}/keys/${beta.id}/limits`, { dailyBudgetUsd: 0.000001 }))
        .status,
    ).toBe(200);
    const budgets = await reader.request('GET', `/api/accounts/${logAccount}/budgets`);
    expect(budgets.status).toBe(200);
    expectDocumentedResponse('GET', '/api/accounts/:accountId/budgets', budgets.body);
    const dayEnd = new Date((Math.floor(Date.now() / 86_400_000) + 1) * 86_400_000).toISOString();
    const [daily, monthly] = budgets.body.account.budgets;
    expect(daily).toMatchObject({ period: 'day', limitUsd: 5, resetsAt: dayEnd, exceeded: false });
    expect(daily.spentUsd).toBeCloseTo(spent(), 10);
    expect(monthly).toMatchObject({ period: 'month', limitUsd: 50 });
    const betaBudgets = budgets.body.keys.find((key: { keyId: string }) => key.keyId === beta.id);
    expect(betaBudgets.budgets).toEqual([expect.objectContaining({ period: 'day', exceeded: spent(beta.id) > 0 })]);
    expect(budgets.body.keys.find((key: { keyId: string }) => key.keyId === alpha.id).budgets).toEqual([]);
    expect(budgets.body.atLimit).toContain('429');
  });

  it("aligns usage buckets to the viewer's time zone and widens the range to whole buckets", async () => {
    const to = Date.UTC(2026, 0, 10, 15, 30);
    const usage = await reader.request(
      'GET',
      `/api/accounts/${logAccount}/usage?from=${to - 2 * 86_400_000}&to=${to}&bucket=day&tzOffsetMinutes=120`,
    );
    expect(usage.status).toBe(200);
    // Local midnight at UTC+2 is 22:00 UTC of the day before.
    expect(usage.body.from).toBe('2026-01-07T22:00:00.000Z');
    expect(usage.body.to).toBe('2026-01-10T22:00:00.000Z');
    expect(usage.body.series[0].points.map((point: { start: string }) => point.start)).toEqual([
      '2026-01-07T22:00:00.000Z',
      '2026-01-08T22:00:00.000Z',
      '2026-01-09T22:00:00.000Z',
    ]);
    expect(usage.body.totals.requests).toBe(0);
  });
});

describe('models', () => {
  it('lists exactly what /v1/models gives an unrestricted key of the account, with provider and context', async () => {
    const created = await admin.request('POST', '/api/accounts', {
      name: 'models-co',
      models: ['mock', 'gpt-4o-mini', 'tools'],
    });
    const key = await admin.request('POST', `/api/accounts/${created.body.id}/keys`, { name: 'probe' });
    const listed = await admin.request('GET', `/api/accounts/${created.body.id}/models`);
    expect(listed.status).toBe(200);
    expectDocumentedResponse('GET', '/api/accounts/:accountId/models', listed.body);
    const v1 = await jsonOf(
      await fetch(`${setup.gateway.baseUrl}/models`, { headers: { authorization: `Bearer ${key.body.key}` } }),
    );
    expect(listed.body.map((model: { id: string }) => model.id)).toEqual(
      v1.data.map((model: { id: string }) => model.id),
    );
    expect(listed.body[0]).toMatchObject({ provider: 'mock', providerType: 'openai' });
    const changed = await admin.request('PATCH', `/api/accounts/${created.body.id}`, { models: ['mock'] });
    expect(changed.body.models).toEqual(['mock']);
    const after = await admin.request('GET', `/api/accounts/${created.body.id}/models`);
    expect(after.body.map((model: { id: string }) => model.id)).toEqual(['mock']);
    const v1After = await jsonOf(
      await fetch(`${setup.gateway.baseUrl}/models`, { headers: { authorization: `Bearer ${key.body.key}` } }),
    );
    expect(v1After.data.map((model: { id: string }) => model.id)).toEqual(['mock']);
  });

  it('lists every configured model with its upstream name for admins', async () => {
    const response = await admin.request('GET', '/api/models');
    expectDocumentedResponse('GET', '/api/models', response.body);
    expect(response.body.find((model: { id: string }) => model.id === 'gpt-4o-mini')).toMatchObject({
      upstreamModel: 'mock',
      pricing: { inputPerMillion: 0.15, outputPerMillion: 0.6 },
    });
  });
});

describe('accounts', () => {
  it("lets admins create, list, disable and re-enable accounts; a disabled account's keys get 403", async () => {
    const created = await admin.request('POST', '/api/accounts', { name: 'globex', models: ['mock'], logBodies: true });
    expect(created.status).toBe(201);
    expectDocumentedResponse('POST', '/api/accounts', created.body);
    expect(created.body).toMatchObject({
      name: 'globex',
      models: ['mock'],
      disabled: false,
      logBodies: true,
      role: null,
    });
    const key = await admin.request('POST', `/api/accounts/${created.body.id}/keys`, { name: 'app' });
    expect((await chat(key.body.key)).status).toBe(200);
    const disabled = await admin.request('PATCH', `/api/accounts/${created.body.id}`, { disabled: true });
    expectDocumentedResponse('PATCH', '/api/accounts/:accountId', disabled.body);
    expect(disabled.body.disabled).toBe(true);
    expect((await chat(key.body.key)).status).toBe(403);
    await admin.request('PATCH', `/api/accounts/${created.body.id}`, { disabled: false });
    expect((await chat(key.body.key)).status).toBe(200);
    const list = await admin.request('GET', '/api/accounts');
    expectDocumentedResponse('GET', '/api/accounts', list.body);
    expect(list.body.map((account: { name: string }) => account.name)).toContain('globex');
  });

  it('shows members only their own accounts, with their role', async () => {
    const list = await owner.request('GET', '/api/accounts');
    expect(list.body).toEqual([expect.objectContaining({ id: acme, name: 'acme', role: 'owner' })]);
    const one = await owner.request('GET', `/api/accounts/${acme}`);
    expectDocumentedResponse('GET', '/api/accounts/:accountId', one.body);
  });
});

describe('members and invitations', () => {
  it('invites a new person who sets a password, joins with the role, and is signed in', async () => {
    const invited = await owner.request('POST', `/api/accounts/${acme}/invitations`, {
      email: 'New.Person@Acme.test',
      role: 'member',
    });
    expect(invited.status).toBe(201);
    expectDocumentedResponse('POST', '/api/accounts/:accountId/invitations', invited.body);
    expect(invited.body.email).toBe('new.person@acme.test');
    expect(invited.body.path).toBe(`/console/invitation#token=${invited.body.token}`);
    const open = await owner.request('GET', `/api/accounts/${acme}/invitations`);
    expectDocumentedResponse('GET', '/api/accounts/:accountId/invitations', open.body);
    expect(open.body.map((invitation: { id: string }) => invitation.id)).toContain(invited.body.id);
    expect(JSON.stringify(open.body)).not.toContain(invited.body.token);

    const anonymous = anonymousClient(setup.gateway);
    const preview = await anonymous.request('POST', '/api/invitations/preview', { token: invited.body.token });
    expectDocumentedResponse('POST', '/api/invitations/preview', preview.body);
    expect(preview.body).toMatchObject({ accountName: 'acme', role: 'member', signedInAsInvitee: false });
    const accepted = await anonymous.request('POST', '/api/invitations/accept', {
      token: invited.body.token,
      password: 'my new password!',
    });
    expect(accepted.status).toBe(200);
    expectDocumentedResponse('POST', '/api/invitations/accept', accepted.body);
    expect(accepted.headers.get('set-cookie')).toContain('switchboard_session=sbs_');
    expect(accepted.body.memberships).toEqual([expect.objectContaining({ accountId: acme, role: 'member' })]);
    await signIn(setup.gateway, 'new.person@acme.test', 'my new password!');
    const again = await anonymous.request('POST', '/api/invitations/accept', {
      token: invited.body.token,
      password: 'my new password!',
    });
    expect(again.status).toBe(404);
    expect(again.body.error.code).toBe('invitation_invalid');

    const members = await owner.request('GET', `/api/accounts/${acme}/members`);
    expectDocumentedResponse('GET', '/api/accounts/:accountId/members', members.body);
    expect(members.body.find((member: { email: string }) => member.email === 'new.person@acme.test')).toMatchObject({
      role: 'member',
    });
  });

  it('invites an existing user, who confirms with their own password', async () => {
    await createTestUser(setup.gateway, { email: 'existing@elsewhere.test' });
    const invited = await owner.request('POST', `/api/accounts/${acme}/invitations`, {
      email: 'existing@elsewhere.test',
      role: 'owner',
    });
    const anonymous = anonymousClient(setup.gateway);
    const preview = await anonymous.request('POST', '/api/invitations/preview', { token: invited.body.token });
    expect(preview.body.signedInAsInvitee).toBe(false);
    // A strong password that is not the login's (a weak one is refused as too weak, whoever the address is).
    const wrong = await anonymous.request('POST', '/api/invitations/accept', {
      token: invited.body.token,
      password: 'a wrong but long passphrase',
    });
    expect(wrong.status).toBe(401);
    const right = await anonymous.request('POST', '/api/invitations/accept', {
      token: invited.body.token,
      password: testPassword,
    });
    expect(right.status).toBe(200);
    expect(right.body.memberships).toEqual([expect.objectContaining({ accountId: acme, role: 'owner' })]);
  });

  it('changes roles and removes members; revokes invitations', async () => {
    const user = await createTestUser(setup.gateway, { email: 'temp@acme.test', account: 'acme', role: 'member' });
    const promoted = await owner.request('PATCH', `/api/accounts/${acme}/members/${user.id}`, { role: 'owner' });
    expect(promoted.status).toBe(200);
    expectDocumentedResponse('PATCH', '/api/accounts/:accountId/members/:userId', promoted.body);
    expect(promoted.body.role).toBe('owner');
    const removed = await owner.request('DELETE', `/api/accounts/${acme}/members/${user.id}`);
    expect(removed.status).toBe(204);
    const members = await owner.request('GET', `/api/accounts/${acme}/members`);
    expect(members.body.map((member: { userId: string }) => member.userId)).not.toContain(user.id);

    const invited = await owner.request('POST', `/api/accounts/${acme}/invitations`, {
      email: 'x@y.test',
      role: 'member',
    });
    const revoked = await owner.request('DELETE', `/api/accounts/${acme}/invitations/${invited.body.id}`);
    expect(revoked.status).toBe(204);
    const preview = await anonymousClient(setup.gateway).request('POST', '/api/invitations/preview', {
      token: invited.body.token,
    });
    expect(preview.status).toBe(404);
  });
});

describe('management tokens', () => {
  it('creates a token shown once that works without a cookie or CSRF token, and revokes it', async () => {
    const created = await owner.request('POST', '/api/tokens', { name: 'ci', expiresInDays: 30 });
    expect(created.status).toBe(201);
    expectDocumentedResponse('POST', '/api/tokens', created.body);
    expect(created.body.token).toMatch(/^sbm_[\w-]{43}$/);
    const script = tokenClient(setup.gateway, created.body.token);
    const keys = await script.request('POST', `/api/accounts/${acme}/keys`, { name: 'from-script' });
    expect(keys.status).toBe(201);
    const list = await owner.request('GET', '/api/tokens');
    expectDocumentedResponse('GET', '/api/tokens', list.body);
    expect(JSON.stringify(list.body)).not.toContain(created.body.token);
    const listed = list.body.find((token: { id: string }) => token.id === created.body.id);
    expect(listed.lastUsedAt).not.toBeNull();
    const revoked = await owner.request('DELETE', `/api/tokens/${created.body.id}`);
    expectDocumentedResponse('DELETE', '/api/tokens/:tokenId', revoked.body);
    expect(revoked.body.status).toBe('revoked');
    const refused = await script.request('GET', '/api/accounts');
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('invalid_token');
  });

  it('narrows a token to one account', async () => {
    const created = await admin.request('POST', '/api/tokens', { name: 'acme-only', accountId: acme });
    const script = tokenClient(setup.gateway, created.body.token);
    const list = await script.request('GET', '/api/accounts');
    expect(list.body.map((account: { id: string }) => account.id)).toEqual([acme]);
    expect((await script.request('GET', `/api/accounts/${acme}/keys`)).status).toBe(200);
  });
});

describe('users (admin)', () => {
  it('lists users with memberships, creates users, makes admins and disables them', async () => {
    const created = await admin.request('POST', '/api/users', { email: 'ops@operator.test', password: testPassword });
    expect(created.status).toBe(201);
    expectDocumentedResponse('POST', '/api/users', created.body);
    const promoted = await admin.request('PATCH', `/api/users/${created.body.id}`, { admin: true });
    expectDocumentedResponse('PATCH', '/api/users/:userId', promoted.body);
    expect(promoted.body.admin).toBe(true);
    const list = await admin.request('GET', '/api/users');
    expectDocumentedResponse('GET', '/api/users', list.body);
    const ownerRow = list.body.find((user: { email: string }) => user.email === 'owner@acme.test');
    expect(ownerRow.memberships).toEqual([expect.objectContaining({ accountName: 'acme', role: 'owner' })]);
    expect(JSON.stringify(list.body)).not.toMatch(/scrypt|password_hash/);

    const session = await signIn(setup.gateway, 'ops@operator.test');
    const disabled = await admin.request('PATCH', `/api/users/${created.body.id}`, { disabled: true });
    expect(disabled.body.disabled).toBe(true);
    expect((await session.request('GET', '/api/session')).status).toBe(401);
    await expect(signIn(setup.gateway, 'ops@operator.test')).rejects.toThrow(/401/);
  });
});

describe('OpenAPI document', () => {
  it('is served at /api/openapi.json and describes every route', async () => {
    const response = await apiRequest(setup.gateway.url, 'GET', '/api/openapi.json');
    expect(response.status).toBe(200);
    const document = response.body;
    expect(document.openapi).toBe('3.1.0');
    for (const route of managementRoutes) {
      const path = route.path.replace(/:(\w+)/g, '{$1}');
      const operation = document.paths[path]?.[route.method.toLowerCase()];
      expect(operation, `${route.method} ${route.path}`).toBeDefined();
      for (const name of [...route.path.matchAll(/:(\w+)/g)].map((found) => found[1])) {
        expect(
          operation.parameters.some(
            (parameter: { name: string; in: string }) => parameter.name === name && parameter.in === 'path',
          ),
        ).toBe(true);
      }
      // GitHub's secret-scanning reports are a JSON array, in GitHub's format; every other body is an object.
      const bodyType = route.path === '/api/secret-scanning/github' ? 'array' : 'object';
      if (route.body) expect(operation.requestBody.content['application/json'].schema.type).toBe(bodyType);
    }
    const logs = document.paths['/api/accounts/{accountId}/logs'].get;
    expect(logs.parameters.map((parameter: { name: string }) => parameter.name)).toEqual(
      expect.arrayContaining(['accountId', 'key', 'model', 'endpoint', 'status', 'from', 'to', 'cursor', 'limit']),
    );
    const status = logs.parameters.find((parameter: { name: string }) => parameter.name === 'status');
    expect(status.schema.enum).toEqual(['success', 'error', 'client_error', 'server_error', 'cancelled']);
    expect(
      document.paths['/api/accounts/{accountId}/keys'].post.responses['201'].content['application/json'].schema
        .required,
    ).toContain('key');
  });

  it('lists every route in docs/management-api.md', async () => {
    const text = readFileSync(path.join(projectRoot, 'docs', 'management-api.md'), 'utf8');
    for (const route of managementRoutes) {
      expect(text).toMatch(new RegExp(`\\| \`${route.method} ${route.path.replace(/:(\w+)/g, '\\{$1\\}')}\` +\\|`));
    }
  });
});
