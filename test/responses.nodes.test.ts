import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { responseCreatedAt } from '../src/api/v1/responses/response-store.js';
import { jsonOf, startTestGateway, type TestGateway } from './support/gateway.js';
import { holdRequests } from './support/held-requests.js';
import { createHeldStreams, openHeldStream } from './support/held-stream.js';
import { type MockUpstream, startMockUpstream } from './support/mock-openai-upstream.js';
import { getStored, postResponses } from './support/responses.js';
import { waitFor } from './support/wait.js';

/**
 * Two gateways on one database, as two nodes behind a load balancer: a conversation begun on one continues on the
 * other at once, although the first writes its stored responses only every few seconds (responses.nodes: the second
 * looks again for a young response id until the first node's batch must have been written).
 */

let mock: MockUpstream;
let first: TestGateway;
let second: TestGateway;
const streams = createHeldStreams();
const heldStreamModel = { name: 'gate-stream', provider: 'mock-patient', upstream_model: 'gate-stream' };

beforeAll(async () => {
  mock = await startMockUpstream();
  mock.on('gate-stream', streams.handler);
  // Writes every 3 s: long after the second node is asked.
  first = await startTestGateway({
    mock,
    models: [heldStreamModel],
    config: { request_log: { flush_interval: '3s' } },
  });
  // Nodes share their configuration: the second knows how long the first may hold a response.
  second = await startTestGateway({
    mock,
    dataDir: first.dataDir,
    database: first.database,
    models: [heldStreamModel],
    config: { request_log: { flush_interval: '3s' } },
  });
});

afterAll(async () => {
  await second.close();
  await first.close();
  await mock.close();
});

describe('stored responses across nodes', () => {
  it('continues on another node a response the first has not written yet', async () => {
    const begun = await jsonOf(await postResponses(first, { model: 'gpt-4o-mini', input: 'My name is Ada.' }));
    const rows = await first.gateway.database.db
      .selectFrom('responses')
      .select('id')
      .where('id', '=', begun.id)
      .execute();
    // Not yet written: the second node must wait for it rather than answer 404.
    expect(rows).toHaveLength(0);
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
});
