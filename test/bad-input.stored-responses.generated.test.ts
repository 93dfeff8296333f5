import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../src/accounts/service.js';
import { type Answer, expectValidSuccess, readAnswer } from './support/bad-input-oracle.js';
import { jsonOf, waitForLogRows } from './support/gateway.js';
import { useGatewayWithMock } from './support/gateway-fixture.js';
import { getStored, postResponses } from './support/responses.js';

/**
 * Generated bad input on the stored side of /v1/responses: `previous_response_id` and the ids of
 * `GET`/`DELETE /v1/responses/{id}` and `GET /v1/responses/{id}/input_items` drawn from the account's own responses,
 * another account's, a deleted one, one never stored, and arbitrary strings (unicode, percent signs, very long), with
 * arbitrary list parameters (`limit`, `order`, `after`, `before`). Another account's response is indistinguishable from
 * a missing one (the same 404, nothing of it in the answer); a bad list parameter is a 400 naming it; nothing is
 * sent upstream for a 404; every answer is logged with its status. Fixed seed; `FUZZ_RUNS=2000` hunts longer.
 */

const seed = Number(process.env.FUZZ_SEED ?? 20261127);
const runs = (count: number) => Number(process.env.FUZZ_RUNS ?? count);

const setup = useGatewayWithMock({ providerMocks: ['mock'] });

afterAll(async () => {
  expect(setup.gateway.logLines.filter((line) => line.includes('unexpected error'))).toEqual([]);
  expect((await fetch(`${setup.gateway.url}/healthz`)).status).toBe(200);
});

const upstreamCalls = () =>
  [setup.mock, setup.providerMocks.anthropic, setup.providerMocks.gemini].reduce(
    (sum, mock) => sum + mock.requests.length,
    0,
  );

interface Pool {
  own: string[];
  /** Ids that are not the account's to see: another account's, deleted, never stored. */
  notOwn: string[];
  otherKey: string;
}
const pool: Pool = { own: [], notOwn: [], otherKey: '' };

async function store(model: string, key: string, extra: Record<string, unknown> = {}): Promise<string> {
  const response = await postResponses(
    setup.gateway,
    { model, input: [{ type: 'message', role: 'user', content: 'Say hi' }], ...extra },
    key,
  );
  expect(response.status).toBe(200);
  return (await jsonOf(response)).id;
}

beforeAll(async () => {
  await createAccount(setup.gateway.gateway.database.db, { name: 'other' });
  pool.otherKey = (await setup.gateway.newKey({ account: 'other', name: 'other-app' })).key;
  const first = await store('gpt-4o-mini', setup.gateway.key);
  pool.own.push(first, await store('claude-mock', setup.gateway.key, { previous_response_id: first }));
  pool.own.push(await store('gemini-mock', setup.gateway.key));
  const deleted = await store('gpt-4o-mini', setup.gateway.key);
  expect((await getStored(setup.gateway, deleted, setup.gateway.key, 'DELETE')).status).toBe(200);
  pool.notOwn.push(
    deleted,
    await store('gpt-4o-mini', pool.otherKey),
    await store('gpt-4o-mini', setup.gateway.key, { store: false }),
  );
});

const answered = new Map<string, number>();
async function expectLoggedAsAnswered(): Promise<void> {
  const expected = new Map(answered);
  answered.clear();
  const rows = await waitForLogRows(setup.gateway, [...expected.keys()]);
  for (const row of rows) expect([row.request_id, row.status]).toEqual([row.request_id, expected.get(row.request_id)]);
}

type IdChoice = { kind: 'own' | 'not-own'; at: number } | { kind: 'any'; text: string };
const idChoice: fc.Arbitrary<IdChoice> = fc.oneof(
  fc.record({ kind: fc.constant('own' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('not-own' as const), at: fc.nat() }),
  fc.record({
    kind: fc.constant('any' as const),
    text: fc.oneof(
      fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }),
      fc.constantFrom('resp_', 'resp_%00', '%', '%ZZ', '..', 'resp_x'.repeat(300), 'null', '\u0000', ' ', 'a/b'),
    ),
  }),
);

function idOf(choice: IdChoice): string {
  if (choice.kind === 'any') return choice.text;
  const list = choice.kind === 'own' ? pool.own : pool.notOwn;
  return list[choice.at % list.length] as string;
}

const listValue = fc.oneof(
  fc.constantFrom('0', '1', '20', '100', '101', '-1', '1.5', 'abc', '', '1e2', '９', ' 5', '99999999999999999999'),
  fc.string({ maxLength: 12 }),
);
const listQuery = fc.record(
  {
    limit: listValue,
    order: fc.oneof(fc.constantFrom('asc', 'desc', 'ASC', ''), fc.string({ maxLength: 8 })),
    after: fc.oneof(fc.string({ maxLength: 20 }), fc.constantFrom('msg_x', '')),
    before: fc.oneof(fc.string({ maxLength: 20 }), fc.constantFrom('msg_x', '')),
    include: fc.constantFrom('message.input_image.image_url', 'x'),
  },
  { requiredKeys: [] },
);

function expectNotFound(answer: Answer, id: string, code: string, param: string | null, context: string): void {
  expect([answer.status, answer.error?.code, answer.error?.param], context).toEqual([404, code, param]);
  // Nothing of a response the account may not see comes back, only the id the client sent.
  expect(answer.text.includes('Say hi'), context).toBe(false);
  if (id.length <= 128) expect(answer.error?.message, context).toContain(id.slice(0, 128));
}

describe('generated ids and list parameters on the stored responses', () => {
  it('GET a response, its input items (any list parameters), or DELETE one that is not the account’s', async () => {
    await fc.assert(
      fc.asyncProperty(
        idChoice,
        fc.constantFrom('retrieve', 'input_items', 'delete'),
        listQuery,
        async (choice, operation, query) => {
          // Only ids that are not the account's are deleted, so the pool of its own stays.
          const id = idOf(choice.kind === 'own' && operation === 'delete' ? { ...choice, kind: 'not-own' } : choice);
          const search = new URLSearchParams(query as Record<string, string>).toString();
          const path =
            operation === 'input_items'
              ? `${encodeURIComponent(id)}/input_items?${search}`
              : `${encodeURIComponent(id)}`;
          const before = upstreamCalls();
          const response = await getStored(
            setup.gateway,
            path,
            setup.gateway.key,
            operation === 'delete' ? 'DELETE' : 'GET',
          );
          const context = `${operation} ${path}`;
          const answer = await readAnswer(response, 'openai', context);
          // An unknown URL is answered before any endpoint (and not logged): fetch sent '..' elsewhere.
          if (answer.error?.code !== 'unknown_url') answered.set(answer.requestId, answer.status);
          expect(upstreamCalls(), context).toBe(before);
          const own = pool.own.includes(id);
          if (answer.status === 400) {
            expect(operation, context).toBe('input_items');
            // A cursor naming no item is refused only once the response is found: another's is a 404 whatever it says.
            expect(['limit', 'order', ...(own ? ['after', 'before'] : [])], context).toContain(answer.error.param);
            return;
          }
          if (!own) {
            // fetch resolves '.' and '..' in a path: the request goes to another URL.
            const code = ['', '.', '..'].includes(id) ? 'unknown_url' : 'response_not_found';
            if (answer.status === 404 && code === 'unknown_url') return;
            expectNotFound(answer, id, code, code === 'unknown_url' ? null : 'response_id', context);
            return;
          }
          expect(answer.status, `${context} -> ${answer.text.slice(0, 300)}`).toBe(200);
          const body = JSON.parse(answer.text);
          if (operation === 'retrieve') expect([body.object, body.id], context).toEqual(['response', id]);
          else {
            expect(body.object, context).toBe('list');
            expect(body.data.length, context).toBeLessThanOrEqual(Number(query.limit ?? 20) || 20);
            expect(typeof body.has_more, context).toBe('boolean');
          }
        },
      ),
      { seed, numRuns: runs(200) },
    );
    await expectLoggedAsAnswered();
  });

  it('continues only the account’s own stored responses: previous_response_id of anything else is the same 404', async () => {
    await fc.assert(
      fc.asyncProperty(
        idChoice,
        fc.constantFrom('gpt-4o-mini', 'claude-mock', 'gemini-mock'),
        fc.boolean(),
        async (choice, model, stream) => {
          const id = idOf(choice);
          const before = upstreamCalls();
          const body = JSON.stringify({ model, previous_response_id: id, input: 'And again?', stream, store: false });
          const response = await postResponses(setup.gateway, body);
          const context = `previous_response_id ${JSON.stringify(id)} via ${model}`;
          const answer = await readAnswer(response, 'openai', context);
          answered.set(answer.requestId, answer.status);
          if (pool.own.includes(id)) {
            expect(answer.status, `${context} -> ${answer.text.slice(0, 300)}`).toBe(200);
            expectValidSuccess('/v1/responses', answer, context);
            return;
          }
          expectNotFound(answer, id, 'previous_response_not_found', 'previous_response_id', context);
          expect(upstreamCalls(), context).toBe(before);
        },
      ),
      { seed, numRuns: runs(120) },
    );
    await expectLoggedAsAnswered();
  });
});
