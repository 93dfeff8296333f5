import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiClient, accountId, createTestUser, signIn } from './support/console.js';
import { postChat, waitForLogRows } from './support/gateway.js';
import { useGatewayWithMock } from './support/gateway-fixture.js';

/**
 * Generated requests to every operation the management API documents (its OpenAPI document drives the generator):
 * path parameters real, unknown or odd, query parameters and bodies of the right names with values right, wrong or
 * arbitrary, as the operator and as an account owner. Whatever arrives: a 4xx with the OpenAI error body naming what
 * is wrong, or a success, never a 5xx. `FUZZ_RUNS=2000` hunts longer.
 */

const setup = useGatewayWithMock();

interface Operation {
  method: string;
  path: string;
  parameters: { in: string; name: string }[];
  body: Record<string, { type?: string | string[] }> | undefined;
}

// Operations that would end the session the generator signs in with, or that need a signed webhook.
const leftOut = new Set(['DELETE /api/session', 'POST /api/session/password', 'POST /api/secret-scanning/github']);

let operator: ApiClient;
let owner: ApiClient;
const operations: Operation[] = [];
const pathValues: Record<string, string[]> = {};

beforeAll(async () => {
  const acme = await accountId(setup.gateway, 'acme');
  const member = await createTestUser(setup.gateway, { email: 'member@acme.test', account: 'acme', role: 'member' });
  await createTestUser(setup.gateway, { email: 'owner@acme.test', account: 'acme', role: 'owner' });
  await createTestUser(setup.gateway, { email: 'root@operator.test', admin: true });
  operator = await signIn(setup.gateway, 'root@operator.test');
  owner = await signIn(setup.gateway, 'owner@acme.test');
  const keys = await operator.request('GET', `/api/accounts/${acme}/keys`);
  const response = await postChat(setup.gateway, { model: 'mock', messages: [{ role: 'user', content: 'hi' }] });
  const requestId = response.headers.get('x-request-id') ?? 'req_unknown';
  await waitForLogRows(setup.gateway, [requestId]);
  const odd = ['nope', '', '%00', '..', 'x'.repeat(300), '%F0%9F%92%A9', "'; drop table accounts; --"];
  pathValues.accountId = [acme, acme, ...odd];
  pathValues.userId = [member.id, ...odd];
  pathValues.keyId = [keys.body.data?.[0]?.id ?? 'nope', ...odd];
  pathValues.requestId = [requestId, 'req_00000000000000000000000000000000', ...odd];
  pathValues.tokenId = odd;
  pathValues.invitationId = odd;

  const spec = (await operator.request('GET', '/api/openapi.json')).body;
  for (const [path, methods] of Object.entries<Record<string, Record<string, unknown>>>(spec.paths)) {
    for (const [method, operation] of Object.entries(methods)) {
      const name = `${method.toUpperCase()} ${path}`;
      if (leftOut.has(name) || path === '/api/openapi.json') continue;
      const requestBody = operation.requestBody as
        | { content: { 'application/json'?: { schema?: { properties?: Operation['body'] } } } }
        | undefined;
      operations.push({
        method: method.toUpperCase(),
        path,
        parameters: (operation.parameters as Operation['parameters'] | undefined) ?? [],
        body: requestBody?.content['application/json']?.schema?.properties,
      });
    }
  }
});

afterAll(async () => {
  expect(setup.gateway.logLines.filter((line) => line.includes('unexpected error'))).toEqual([]);
  expect((await fetch(`${setup.gateway.url}/healthz`)).status).toBe(200);
});

const oddText = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.constantFrom('', ' ', '0', '-1', '1e309', 'NaN', 'null', '2026-11-27', '2026-11-27T10:00:00Z', 'x'.repeat(2000)),
  fc.constantFrom('day', 'hour', 'model', 'key,model', 'csv', 'json', 'ndjson', '-300', '840', '4xx', '500', 'chat'),
);

function valueFor(schema: { type?: string | string[] } | undefined): fc.Arbitrary<unknown> {
  const type = Array.isArray(schema?.type) ? schema?.type[0] : schema?.type;
  const right: fc.Arbitrary<unknown> =
    type === 'string'
      ? oddText
      : type === 'integer' || type === 'number'
        ? fc.oneof(fc.integer({ min: -10, max: 100_000 }), fc.double(), fc.constant(Number.MAX_SAFE_INTEGER))
        : type === 'boolean'
          ? fc.boolean()
          : type === 'array'
            ? fc.array(oddText, { maxLength: 3 })
            : fc.dictionary(fc.string({ maxLength: 12 }), fc.oneof(fc.integer(), fc.constant(null), oddText), {
                maxKeys: 3,
              });
  return fc.oneof({ weight: 3, arbitrary: right }, { weight: 1, arbitrary: fc.jsonValue() });
}

function requestFor(operation: Operation) {
  const pathParameters = operation.parameters.filter((parameter) => parameter.in === 'path');
  const queryParameters = operation.parameters.filter((parameter) => parameter.in === 'query');
  return fc.record({
    path: fc.tuple(...pathParameters.map((parameter) => fc.constantFrom(...(pathValues[parameter.name] ?? ['x'])))),
    query: fc
      .subarray(queryParameters)
      .chain((chosen) => fc.tuple(...chosen.map((parameter) => fc.tuple(fc.constant(parameter.name), oddText)))),
    body: operation.body
      ? fc.oneof(
          { weight: 4, arbitrary: fc.record(mapValues(operation.body, valueFor), { requiredKeys: [] }) },
          { weight: 1, arbitrary: fc.jsonValue() },
        )
      : fc.constant(undefined),
    asOwner: fc.boolean(),
  });
}

function mapValues<T, U>(object: Record<string, T>, map: (value: T) => U): Record<string, U> {
  return Object.fromEntries(Object.entries(object).map(([key, value]) => [key, map(value)]));
}

const runs = Number(process.env.FUZZ_RUNS ?? 12);

describe('generated requests to every documented management operation', () => {
  it('answer a success or a 4xx with the error body, never a 5xx', {
    timeout: Math.max(30_000, runs * 2_000),
  }, async () => {
    expect(operations.length).toBeGreaterThan(30);
    for (const operation of operations) {
      await fc.assert(
        fc.asyncProperty(requestFor(operation), async ({ path: values, query, body, asOwner }) => {
          let index = 0;
          const path = operation.path.replace(/\{[^}]+\}/g, () => encodeURIComponent(values[index++] as string));
          const search = new URLSearchParams(query as [string, string][]).toString();
          const url = search ? `${path}?${search}` : path;
          const client = asOwner ? owner : operator;
          const response = await client.request(operation.method, url, body);
          const context = `${operation.method} ${url} ${JSON.stringify(body)?.slice(0, 300)} -> ${response.status} ${JSON.stringify(response.body)?.slice(0, 300)}`;
          expect(response.status, context).toBeLessThan(500);
          if (response.status >= 400) {
            expect(Object.keys(response.body?.error ?? {}).sort(), context).toEqual([
              'code',
              'message',
              'param',
              'type',
            ]);
          }
        }),
        { numRuns: runs },
      );
    }
  });
});
