import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../src/accounts/service.js';
import { newItemId, newResponseId, responseCreatedAt } from '../src/api/v1/responses/ids.js';
import { jsonOf, startTestGateway, type TestGateway } from './support/gateway.js';
import { holdRequests } from './support/held-requests.js';
import { createHeldStreams, openHeldStream } from './support/held-stream.js';
import type { RecordedRequest } from './support/mock-openai-upstream.js';
import { type MockUpstream, startMockUpstream } from './support/mock-openai-upstream.js';
import { getStored, parseEvents, postResponses } from './support/responses.js';
import { waitFor } from './support/wait.js';

/**
 * Two gateways on one database, as two nodes behind a load balancer: a conversation begun on one continues on the
 * other at once, although the first writes its stored responses only every few seconds (responses.nodes: the second
 * looks again for a young response id until the first node's batch must have been written).
 */

let mock: MockUpstream;
let first: TestGateway;
let second: TestGateway;
/** A key of another account, on the second node. */
let strangerKey: string;
const streams = createHeldStreams();
const heldStreamModel = { name: 'gate-stream', provider: 'mock-patient', upstream_model: 'gate-stream' };
/** A held stream whose upstream answers only when the test opens it (`openLateStream`). */
const lateStreamModel = { name: 'late-stream', provider: 'mock-patient', upstream_model: 'late-stream' };
let openLateStream: () => void = () => {};
let lateStreamArrivedAt: number | undefined;
const nativeModel = {
  name: 'native-model',
  provider: 'mock',
  upstream_model: 'native-upstream',
  responses_api: 'native',
};
const fixtures = path.resolve(import.meta.dirname, 'fixtures/responses');
const nativeJson = readFileSync(path.join(fixtures, 'native-response.json'), 'utf8');
const nativeSse = readFileSync(path.join(fixtures, 'native-stream.sse'), 'utf8');

/**
 * A native upstream's answer under an id shaped like OpenAI's (its digits are no time the gateway can read), whose
 * `store` says the opposite of what it was asked: what an upstream did with its own storage is no answer to what the
 * gateway did.
 */
function answerNatively(request: RecordedRequest, response: ServerResponse): void {
  const id = `resp_68af4030592c${randomBytes(16).toString('hex')}`;
  const upstreamStore = String(request.body.store === false);
  if (request.body.stream === true) {
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    response.end(nativeSse.replaceAll('resp_68f0native', id).replaceAll('"store":false', `"store":${upstreamStore}`));
    return;
  }
  const text = nativeJson.replace('resp_68f0native', id).replace('"store": false', `"store": ${upstreamStore}`);
  response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  response.end(text);
}

/** The state of a response's row in the shared database (null: stored whole; undefined: no row). */
async function stateOf(id: string): Promise<string | null | undefined> {
  const row = await first.gateway.database.db
    .selectFrom('responses')
    .select('state')
    .where('id', '=', id)
    .executeTakeFirst();
  return row ? row.state : undefined;
}

/**
 * The row a node killed mid-stream leaves behind: standing for a response in progress (its settings as it began, its
 * input item's id), its lease last renewed `leaseAgoMs` ago, renewed by no node since.
 */
async function leaveStreamingRow(leaseAgoMs: number): Promise<{ id: string; inputItemId: string }> {
  const db = first.gateway.database.db;
  const account = await db.selectFrom('accounts').select('id').where('name', '=', 'acme').executeTakeFirstOrThrow();
  const now = Date.now();
  const id = newResponseId(now - 120_000);
  const inputItemId = newItemId('msg', now - 120_000);
  const settings = { id, object: 'response', created_at: Math.floor((now - 120_000) / 1000), status: 'in_progress' };
  await db
    .insertInto('responses')
    .values({
      id,
      account_id: account.id,
      key_id: first.keyId,
      model: 'gate-stream',
      previous_response_id: null,
      created_at: now - 120_000,
      expires_at: now + 86_400_000,
      input_count: 0,
      stored_bytes: 100,
      response: JSON.stringify({ ...settings, model: 'gate-stream', store: true }),
      input_items: '[]',
      output_items: '[]',
      item_ids: JSON.stringify([inputItemId]),
      state: 'in_progress',
      streaming_until: now - leaseAgoMs,
    })
    .execute();
  await db
    .insertInto('response_item_ids')
    .values({ account_id: account.id, item_id: inputItemId, response_id: id })
    .execute();
  return { id, inputItemId };
}

beforeAll(async () => {
  mock = await startMockUpstream();
  mock.on('gate-stream', streams.handler);
  mock.on('native-upstream', answerNatively);
  mock.on('late-stream', (request, response) => {
    lateStreamArrivedAt = Date.now();
    openLateStream = () => streams.handler(request, response);
  });
  // Writes every 3 s: long after the second node is asked.
  first = await startTestGateway({
    mock,
    models: [heldStreamModel, lateStreamModel, nativeModel],
    config: { request_log: { flush_interval: '3s' }, responses: { max_stored_bytes: '4kb' } },
  });
  // Nodes share their configuration: the second knows how long the first may hold a response.
  second = await startTestGateway({
    mock,
    dataDir: first.dataDir,
    database: first.database,
    models: [heldStreamModel, lateStreamModel, nativeModel],
    config: { request_log: { flush_interval: '3s' }, responses: { max_stored_bytes: '4kb' } },
  });
  await createAccount(second.gateway.database.db, { name: 'globex' });
  strangerKey = (await second.newKey({ account: 'globex' })).key;
});

afterAll(async () => {
  await second.close();
  await first.close();
  await mock.close();
});

describe('stored responses across nodes', () => {
  it('continues on another node a response the first has not written yet', async () => {
    // Not yet written: the second node must wait for it rather than answer 404. A machine busy enough to let the
    // first node's write (3 s later) happen before the check leaves nothing to test: another response is made then.
    let begun: { id: string } | undefined;
    for (let attempt = 0; attempt < 3 && !begun; attempt++) {
      const made = await jsonOf(await postResponses(first, { model: 'gpt-4o-mini', input: 'My name is Ada.' }));
      const rows = await first.gateway.database.db
        .selectFrom('responses')
        .select('id')
        .where('id', '=', made.id)
        .execute();
      if (rows.length === 0) begun = made;
    }
    if (!begun) throw new Error('each response was written before it could be asked for on the second node');
    const continued = await postResponses(
      second,
      { model: 'gpt-4o-mini', previous_response_id: begun.id, input: 'What is my name?' },
      first.key,
    );
    expect(continued.status).toBe(200);
    expect(mock.requests.at(-1)?.body.messages).toEqual([
      { role: 'user', content: 'My name is Ada.' },
      { role: 'assistant', content: 'Echo: My name is Ada.' },
      { role: 'user', content: 'What is my name?' },
    ]);
    expect((await getStored(second, begun.id, first.key)).status).toBe(200);
  });

  it('continues on another node at once a response that took longer than a flush interval to generate', async () => {
    const held = holdRequests(mock);
    const answer = postResponses(first, { model: 'held', input: 'A slow answer.' });
    await held.arrived(1);
    // Generation outlasts a flush interval and its margin: the first node queues the answer only then.
    const arrivedAt = Date.now();
    await waitFor('the generation to outlast a flush interval and a second', () => Date.now() > arrivedAt + 1500);
    held.releaseAll();
    const begun = await jsonOf(await answer);
    const continued = await postResponses(
      second,
      { model: 'gpt-4o-mini', previous_response_id: begun.id, input: 'And now?' },
      first.key,
    );
    expect(continued.status).toBe(200);
    expect(mock.requests.at(-1)?.body.messages).toEqual([
      { role: 'user', content: 'A slow answer.' },
      { role: 'assistant', content: 'Echo: A slow answer.' },
      { role: 'user', content: 'And now?' },
    ]);
  });

  it('continues on another node at once a stream that lasted longer than a flush interval', async () => {
    const stream = await openHeldStream(first, streams, 'A long stream.');
    const createdAt = responseCreatedAt(stream.id) ?? 0;
    await waitFor('the stream to outlast a flush interval and a second', () => Date.now() > createdAt + 1500);
    streams.release('A long stream.');
    expect(await stream.rest()).toContain('event: response.completed');
    const continued = await postResponses(
      second,
      { model: 'gpt-4o-mini', previous_response_id: stream.id, input: 'Go on.' },
      first.key,
    );
    expect(continued.status).toBe(200);
    expect(mock.requests.at(-1)?.body.messages).toEqual([
      { role: 'user', content: 'A long stream.' },
      { role: 'assistant', content: 'first last' },
      { role: 'user', content: 'Go on.' },
    ]);
  });

  it('tells another node of a response still streaming: retrieved in progress, not continued yet, then whole', async () => {
    const stream = await openHeldStream(first, streams, 'Still streaming.');
    await waitFor('its row in progress to be written', async () => (await stateOf(stream.id)) === 'in_progress');
    const retrieved = await getStored(second, stream.id, first.key);
    expect(retrieved.status).toBe(200);
    expect(await jsonOf(retrieved)).toMatchObject({ id: stream.id, status: 'in_progress', store: true, output: [] });
    const continued = await postResponses(
      second,
      { model: 'gpt-4o-mini', previous_response_id: stream.id, input: 'Too soon.' },
      first.key,
    );
    expect(continued.status).toBe(409);
    const { error } = await jsonOf(continued);
    expect(error).toMatchObject({ code: 'response_in_progress', param: 'previous_response_id' });
    expect(error.message).toContain('still in progress');
    const listed = await getStored(second, `${stream.id}/input_items`, first.key);
    expect(listed.status).toBe(409);
    expect((await jsonOf(listed)).error).toMatchObject({ code: 'response_in_progress', param: 'response_id' });
    // Another account's read is the same 404 as ever.
    expect((await getStored(second, stream.id, strangerKey)).status).toBe(404);

    streams.release('Still streaming.');
    expect(await stream.rest()).toContain('event: response.completed');
    const after = await postResponses(
      second,
      { model: 'gpt-4o-mini', previous_response_id: stream.id, input: 'Now.' },
      first.key,
    );
    expect(after.status).toBe(200);
    expect(mock.requests.at(-1)?.body.messages).toEqual([
      { role: 'user', content: 'Still streaming.' },
      { role: 'assistant', content: 'first last' },
      { role: 'user', content: 'Now.' },
    ]);
    expect(await jsonOf(await getStored(second, stream.id, first.key))).toMatchObject({ status: 'completed' });
  });

  it('finds on another node, from its first event, a stream whose upstream was slow to begin', async () => {
    const marker = 'A stream slow to begin.';
    lateStreamArrivedAt = undefined;
    const opening = openHeldStream(first, streams, marker, { model: 'late-stream' });
    await waitFor('the request to reach the upstream', () => lateStreamArrivedAt !== undefined);
    // The upstream begins after a flush interval and a second: the client learns the id only then.
    const arrivedAt = lateStreamArrivedAt ?? 0;
    await waitFor('a flush interval and a second and a half to pass', () => Date.now() > arrivedAt + 4500);
    openLateStream();
    const stream = await opening;
    // Another node asked at once waits for the first node's batch, rather than answering "not found".
    const retrieved = await getStored(second, stream.id, first.key);
    expect(retrieved.status).toBe(200);
    expect(await jsonOf(retrieved)).toMatchObject({ id: stream.id, status: 'in_progress' });
    streams.release(marker);
    expect(await stream.rest()).toContain('event: response.completed');
    expect(await jsonOf(await getStored(second, stream.id, first.key))).toMatchObject({ status: 'completed' });
  });

  it('deletes from another node a response still streaming, for good', async () => {
    const stream = await openHeldStream(first, streams, 'Delete me while I stream.');
    await waitFor('its row in progress to be written', async () => (await stateOf(stream.id)) === 'in_progress');
    const deleted = await getStored(second, stream.id, first.key, 'DELETE');
    expect(await jsonOf(deleted)).toEqual({ id: stream.id, object: 'response.deleted', deleted: true });
    expect((await getStored(second, stream.id, first.key, 'DELETE')).status).toBe(404);
    // The node streaming it reads its row, once written, before answering for it: deleted there too.
    expect((await getStored(first, stream.id, first.key)).status).toBe(404);
    expect((await getStored(first, stream.id, first.key, 'DELETE')).status).toBe(404);
    // Over half a second long, the stream's response is written before its last event (and does not replace the row).
    const createdAt = responseCreatedAt(stream.id) ?? 0;
    await waitFor('the stream to outlast half a second', () => Date.now() > createdAt + 600);
    streams.release('Delete me while I stream.');
    expect(await stream.rest()).toContain('event: response.completed');
    expect(await stateOf(stream.id)).toBe('deleted');
    for (const node of [first, second]) {
      expect((await getStored(node, stream.id, first.key)).status).toBe(404);
      const continued = await postResponses(
        node,
        { model: 'gpt-4o-mini', previous_response_id: stream.id, input: 'Gone?' },
        first.key,
      );
      expect((await jsonOf(continued)).error.code).toBe('previous_response_not_found');
    }
  });

  it('tells another node that an item of a response still streaming is in progress, then gives it once it has ended', async () => {
    const givenId = newItemId('msg');
    const marker = 'Refer to my items while I stream.';
    const stream = await openHeldStream(first, streams, marker, {
      input: [{ type: 'message', role: 'user', id: givenId, content: marker }],
    });
    const events = await stream.readUntil('response.output_item.added');
    const outputId = events.find((event) => event.event === 'response.output_item.added')?.data.item.id as string;
    await waitFor('its row in progress to be written', async () => (await stateOf(stream.id)) === 'in_progress');
    const refer = (node: TestGateway, id: string, key = first.key) =>
      postResponses(
        node,
        {
          model: 'gpt-4o-mini',
          input: [
            { role: 'user', content: 'Before.' },
            { type: 'item_reference', id },
          ],
        },
        key,
      );
    // Its input item and the output item it has shown so far: not "not found", but not ended yet.
    for (const id of [givenId, outputId]) {
      const referenced = await refer(second, id);
      expect(referenced.status).toBe(409);
      const { error } = await jsonOf(referenced);
      expect(error).toMatchObject({
        code: 'response_in_progress',
        param: 'input[1].id',
        type: 'invalid_request_error',
      });
      expect(error.message).toContain(stream.id);
      // Another account's reference is the 404 of an item that never was.
      const stranger = await refer(second, id, strangerKey);
      expect(stranger.status).toBe(404);
      expect((await jsonOf(stranger)).error).toMatchObject({ code: 'item_not_found', param: 'input[1].id' });
      expect((await jsonOf(await refer(second, `${id}0`))).error.code).toBe('item_not_found');
    }

    streams.release(marker);
    expect(await stream.rest()).toContain('event: response.completed');
    expect((await refer(second, givenId)).status).toBe(200);
    expect(mock.requests.at(-1)?.body.messages).toEqual([
      { role: 'user', content: 'Before.' },
      { role: 'user', content: marker },
    ]);
    expect((await refer(second, outputId)).status).toBe(200);
    expect(mock.requests.at(-1)?.body.messages).toEqual([
      { role: 'user', content: 'Before.' },
      { role: 'assistant', content: 'first last' },
    ]);
  });

  it('reads a response whose node stopped mid-stream as failed on every node once its lease has run out', async () => {
    const { id, inputItemId } = await leaveStreamingRow(1000);
    for (const node of [first, second]) {
      const retrieved = await getStored(node, id, first.key);
      expect(retrieved.status).toBe(200);
      const response = await jsonOf(retrieved);
      expect(response).toMatchObject({ id, status: 'failed', output: [], error: { code: 'server_error' } });
      expect(response.error.message).toContain('stopped before its stream ended');
      // Nothing of it was stored to continue or list: the 404s of a response not found, saying why.
      const continued = await postResponses(
        node,
        { model: 'gpt-4o-mini', previous_response_id: id, input: 'Go on.' },
        first.key,
      );
      expect(continued.status).toBe(404);
      const { error } = await jsonOf(continued);
      expect(error).toMatchObject({ code: 'previous_response_not_found', param: 'previous_response_id' });
      expect(error.message).toContain('stopped before its stream ended');
      const listed = await getStored(node, `${id}/input_items`, first.key);
      expect(listed.status).toBe(404);
      expect((await jsonOf(listed)).error).toMatchObject({ code: 'response_not_found', param: 'response_id' });
      const referenced = await postResponses(
        node,
        { model: 'gpt-4o-mini', input: [{ type: 'item_reference', id: inputItemId }] },
        first.key,
      );
      expect(referenced.status).toBe(404);
      expect((await jsonOf(referenced)).error).toMatchObject({ code: 'item_not_found', param: 'input[0].id' });
      // Another account knows nothing of it.
      expect((await getStored(node, id, strangerKey)).status).toBe(404);
    }
    // Deleted, it is gone like any other.
    expect((await getStored(second, id, first.key, 'DELETE')).status).toBe(200);
    expect((await getStored(first, id, first.key)).status).toBe(404);
  });

  it('reads a row whose lease still runs as in progress, however old its response', async () => {
    const { id } = await leaveStreamingRow(-30_000);
    expect(await jsonOf(await getStored(second, id, first.key))).toMatchObject({ id, status: 'in_progress' });
    const continued = await postResponses(
      second,
      { model: 'gpt-4o-mini', previous_response_id: id, input: 'Too soon.' },
      first.key,
    );
    expect(continued.status).toBe(409);
  });

  it('answers on another node at once an item reference to a response the first has not written yet', async () => {
    const begun = await jsonOf(await postResponses(first, { model: 'gpt-4o-mini', input: 'Remember 42.' }));
    const referenced = await postResponses(
      second,
      {
        model: 'gpt-4o-mini',
        input: [
          { type: 'item_reference', id: begun.output[0].id },
          { role: 'user', content: 'Which number?' },
        ],
      },
      first.key,
    );
    expect(referenced.status).toBe(200);
    expect(mock.requests.at(-1)?.body.messages).toEqual([
      { role: 'assistant', content: 'Echo: Remember 42.' },
      { role: 'user', content: 'Which number?' },
    ]);
  });

  it.each([false, true])(
    'tells another node that a response grown too large to store was answered but not stored (stream: %s)',
    async (stream) => {
      // A body under 4 KB, echoed back: input and output together are over it.
      const response = await postResponses(first, {
        model: 'gpt-4o-mini',
        input: `${stream ? 's' : 'j'} ${'w'.repeat(2200)}`,
        stream,
      });
      expect(response.status).toBe(200);
      const answer = stream
        ? parseEvents(await response.text()).find((event) => event.event === 'response.completed')?.data.response
        : await jsonOf(response);
      expect(answer.store).toBe(false);
      const continued = await postResponses(
        second,
        { model: 'gpt-4o-mini', previous_response_id: answer.id, input: 'go on' },
        first.key,
      );
      expect(continued.status).toBe(400);
      const { error } = await jsonOf(continued);
      expect(error).toMatchObject({ code: 'stored_response_too_large', param: 'previous_response_id' });
      expect(error.message).toContain('answered but not stored');
      for (const path of [answer.id, `${answer.id}/input_items`]) {
        const looked = await getStored(second, path, first.key);
        expect(looked.status).toBe(404);
        const lookedError = (await jsonOf(looked)).error;
        expect(lookedError).toMatchObject({ code: 'response_not_found', param: 'response_id' });
        expect(lookedError.message).toContain('answered but not stored');
      }
      // A reference to one of its items is told the same.
      const referenced = await postResponses(
        second,
        { model: 'gpt-4o-mini', input: [{ type: 'item_reference', id: answer.output[0].id }] },
        first.key,
      );
      expect(referenced.status).toBe(404);
      const referenceError = (await jsonOf(referenced)).error;
      expect(referenceError).toMatchObject({ code: 'item_not_found', param: 'input[0].id' });
      expect(referenceError.message).toContain('answered but not stored');
      // Another account knows nothing of it.
      const stranger = await postResponses(
        second,
        { model: 'gpt-4o-mini', previous_response_id: answer.id, input: 'go on' },
        strangerKey,
      );
      expect(stranger.status).toBe(404);
      // Deleted, it is forgotten everywhere.
      const deleted = await getStored(second, answer.id, first.key, 'DELETE');
      expect(await jsonOf(deleted)).toEqual({ id: answer.id, object: 'response.deleted', deleted: true });
      const afterDelete = await postResponses(
        first,
        { model: 'gpt-4o-mini', previous_response_id: answer.id, input: 'go on' },
        first.key,
      );
      expect(afterDelete.status).toBe(404);
      expect((await jsonOf(afterDelete)).error.code).toBe('previous_response_not_found');
      const referencedAfterDelete = await postResponses(
        first,
        { model: 'gpt-4o-mini', input: [{ type: 'item_reference', id: answer.output[0].id }] },
        first.key,
      );
      expect((await jsonOf(referencedAfterDelete)).error.message).not.toContain('not stored');
    },
  );

  it.each([false, true])(
    'continues on another node at once a natively answered response (stream: %s)',
    async (stream) => {
      const answer = await postResponses(first, { model: 'native-model', input: 'Native question.', stream });
      expect(answer.status).toBe(200);
      let id: string;
      if (stream) {
        const events = parseEvents(await answer.text());
        const responses = events.filter((event) => event.data.response).map((event) => event.data.response);
        expect(responses.map((response) => response.status)).toEqual(['in_progress', 'in_progress', 'completed']);
        // Every event's response says it is stored, as it is, whatever the upstream said of its own.
        expect(responses.map((response) => response.store)).toEqual([true, true, true]);
        id = responses[0].id;
      } else {
        const body = await jsonOf(answer);
        expect(body.store).toBe(true);
        id = body.id;
      }
      // A stored stream is shown under the gateway's id, dated at its first event; a JSON answer keeps the upstream's.
      if (stream) expect(responseCreatedAt(id)).toBeLessThanOrEqual(Date.now());
      else expect(id).toMatch(/^resp_68af4030592c/);
      const retrieved = await jsonOf(await getStored(second, id, first.key));
      expect(retrieved).toMatchObject({ id, store: true });
      const continued = await postResponses(
        second,
        { model: 'gpt-4o-mini', previous_response_id: id, input: 'Next question.' },
        first.key,
      );
      expect(continued.status).toBe(200);
      expect(mock.requests.at(-1)?.body.messages).toContainEqual({ role: 'user', content: 'Native question.' });
    },
  );

  it.each([false, true])(
    'answers store: false for a natively answered response it did not store (stream: %s)',
    async (stream) => {
      const answer = await postResponses(first, { model: 'native-model', input: 'Unstored.', stream, store: false });
      expect(answer.status).toBe(200);
      let id: string;
      if (stream) {
        const events = parseEvents(await answer.text());
        const responses = events.filter((event) => event.data.response).map((event) => event.data.response);
        expect(responses.map((response) => response.store)).toEqual([false, false, false]);
        id = responses[0].id;
      } else {
        const body = await jsonOf(answer);
        expect(body.store).toBe(false);
        id = body.id;
      }
      // The upstream was told not to store it (it said it did).
      expect(mock.requests.at(-1)?.body.store).toBe(false);
      expect((await getStored(second, id, first.key)).status).toBe(404);
    },
  );
});
