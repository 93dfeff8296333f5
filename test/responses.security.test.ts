import { beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../src/accounts/service.js';
import { newResponseId } from '../src/api/v1/responses/ids.js';
import { jsonOf } from './support/gateway.js';
import { useGatewayWithMock } from './support/gateway-fixture.js';
import { getStored, postResponses } from './support/responses.js';

/**
 * Stored responses are the account's alone: another account's response id reads exactly like one that never existed,
 * for retrieve, delete, input items, previous_response_id and item references.
 */

const setup = useGatewayWithMock();

let otherKey: string;
let sameAccountKey: string;

beforeAll(async () => {
  await createAccount(setup.gateway.gateway.database.db, { name: 'globex' });
  otherKey = (await setup.gateway.newKey({ account: 'globex' })).key;
  sameAccountKey = (await setup.gateway.newKey({ name: 'second-app' })).key;
});

/** A response's status and error body without the parts that name the id asked for. */
async function shapeOf(response: Response, id: string) {
  const body = await jsonOf(response);
  return { status: response.status, body: JSON.parse(JSON.stringify(body).replaceAll(id, '<id>')) };
}

describe('stored responses between accounts', () => {
  it('answers another account’s response exactly like a missing one', async () => {
    const mine = await jsonOf(await postResponses(setup.gateway, { model: 'gpt-4o-mini', input: 'private' }));
    const missing = `resp_${'0'.repeat(32)}`;
    for (const path of ['', '/input_items']) {
      const theirs = await shapeOf(await getStored(setup.gateway, `${mine.id}${path}`, otherKey), mine.id);
      const never = await shapeOf(await getStored(setup.gateway, `${missing}${path}`, otherKey), missing);
      expect(theirs.status).toBe(404);
      expect(theirs).toEqual(never);
    }
    const deleteTheirs = await shapeOf(await getStored(setup.gateway, mine.id, otherKey, 'DELETE'), mine.id);
    const deleteNever = await shapeOf(await getStored(setup.gateway, missing, otherKey, 'DELETE'), missing);
    expect(deleteTheirs).toEqual(deleteNever);

    const continueTheirs = await postResponses(
      setup.gateway,
      { model: 'gpt-4o-mini', previous_response_id: mine.id, input: 'leak?' },
      otherKey,
    );
    const continueNever = await postResponses(
      setup.gateway,
      { model: 'gpt-4o-mini', previous_response_id: missing, input: 'leak?' },
      otherKey,
    );
    expect(await shapeOf(continueTheirs, mine.id)).toEqual(await shapeOf(continueNever, missing));
    expect(continueTheirs.status).toBe(404);

    const referenceTheirs = await postResponses(
      setup.gateway,
      { model: 'gpt-4o-mini', input: [{ type: 'item_reference', id: mine.output[0].id }] },
      otherKey,
    );
    expect(referenceTheirs.status).toBe(404);
    expect((await jsonOf(referenceTheirs)).error.code).toBe('item_not_found');

    // Still there for its own account, whichever of its keys asks.
    expect((await getStored(setup.gateway, mine.id, sameAccountKey)).status).toBe(200);
    const continued = await postResponses(
      setup.gateway,
      {
        model: 'gpt-4o-mini',
        input: [
          { type: 'item_reference', id: mine.output[0].id },
          { role: 'user', content: 'go on' },
        ],
      },
      sameAccountKey,
    );
    expect(continued.status).toBe(200);
    expect(setup.mock.requests.at(-1)?.body.messages).toEqual([
      { role: 'assistant', content: 'Echo: private' },
      { role: 'user', content: 'go on' },
    ]);
  });

  it('answers another account’s, a deleted, a store:false and a never-stored id alike, headers included', async () => {
    // Asked by account acme: `theirs` is globex's, the others were acme's or never were.
    const theirs = (await jsonOf(await postResponses(setup.gateway, { model: 'gpt-4o-mini', input: 'x' }, otherKey)))
      .id;
    const deleted = (await jsonOf(await postResponses(setup.gateway, { model: 'gpt-4o-mini', input: 'gone' }))).id;
    expect((await getStored(setup.gateway, deleted, setup.gateway.key, 'DELETE')).status).toBe(200);
    const unstored = (
      await jsonOf(await postResponses(setup.gateway, { model: 'gpt-4o-mini', input: 'unstored', store: false }))
    ).id;
    const cases = [theirs, deleted, unstored, newResponseId()];
    const asker = setup.gateway.key;
    const answer = async (id: string, route: string) => {
      const response =
        route === 'continue'
          ? await postResponses(setup.gateway, { model: 'gpt-4o-mini', previous_response_id: id, input: 'x' }, asker)
          : await getStored(
              setup.gateway,
              route === 'input_items' ? `${id}/input_items` : id,
              asker,
              route === 'delete' ? 'DELETE' : 'GET',
            );
      const headers: Record<string, string> = {};
      response.headers.forEach((value, name) => {
        if (name !== 'x-request-id' && name !== 'date') headers[name] = value;
      });
      return { ...(await shapeOf(response, id)), headers };
    };
    for (const route of ['get', 'delete', 'input_items', 'continue']) {
      const answers = await Promise.all(cases.map((id) => answer(id, route)));
      expect(answers[0]?.status).toBe(404);
      for (const other of answers.slice(1)) expect(other).toEqual(answers[0]);
    }
  });

  it('needs a valid key for every stored-response route', async () => {
    for (const [path, method] of [
      ['resp_x', 'GET'],
      ['resp_x', 'DELETE'],
      ['resp_x/input_items', 'GET'],
    ] as const) {
      const response = await getStored(setup.gateway, path, 'sk-sb-not-a-key', method);
      expect(response.status).toBe(401);
    }
  });
});
