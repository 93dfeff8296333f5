import type { ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { responseCreatedAt } from '../src/api/v1/responses/response-store.js';
import { jsonOf } from './support/gateway.js';
import { useGatewayWithMock } from './support/gateway-fixture.js';
import { holdRequests } from './support/held-requests.js';
import type { RecordedRequest } from './support/mock-openai-upstream.js';
import { getStored, parseEvents, postResponses } from './support/responses.js';
import { waitFor } from './support/wait.js';

/**
 * The stored state of /v1/responses under concurrent use: the same call fired many times at once, then invariants
 * checked (every branch of a conversation its own, nothing lost or interleaved; a response deleted once; a response
 * deleted while it streams stays deleted).
 */

/** Streams for model `gate-stream` send their first words, then wait for the test to let them finish. */
const gates = new Map<string, () => void>();
let streamArrivals = 0;

function heldStream(request: RecordedRequest, response: ServerResponse): void {
  streamArrivals++;
  const messages = request.body.messages as Array<{ content: string }>;
  const marker = String(messages.at(-1)?.content ?? '');
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  const chunk = (delta: Record<string, unknown>, finish: string | null) =>
    `data: ${JSON.stringify({ id: 'chatcmpl-gate', object: 'chat.completion.chunk', created: 1, model: 'gate-stream', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  response.write(chunk({ role: 'assistant', content: 'first ' }, null));
  gates.set(marker, () => {
    if (response.destroyed) return;
    response.write(chunk({ content: 'last' }, null));
    response.write(chunk({}, 'stop'));
    response.end('data: [DONE]\n\n');
  });
}

const setup = useGatewayWithMock({
  models: [{ name: 'gate-stream', provider: 'mock-patient', upstream_model: 'gate-stream' }],
  upstreamHandlers: { 'gate-stream': heldStream },
});

async function create(body: Record<string, unknown>) {
  const response = await postResponses(setup.gateway, { model: 'gpt-4o-mini', ...body });
  expect(response.status).toBe(200);
  return jsonOf(response);
}

async function inputItems(id: string, query = '') {
  const response = await getStored(setup.gateway, `${id}/input_items${query}`);
  return { status: response.status, body: await jsonOf(response) };
}

/** A stream of model `gate-stream` read up to its `response.created`; `rest` releases nothing, it reads to the end. */
async function openHeldStream(marker: string) {
  const before = streamArrivals;
  const response = await postResponses(setup.gateway, { model: 'gate-stream', stream: true, input: marker });
  expect(response.status).toBe(200);
  const reader = response.body?.getReader();
  if (!reader) throw new Error('no body');
  const decoder = new TextDecoder();
  let text = '';
  await waitFor('the stream to reach the upstream', () => streamArrivals > before);
  while (!text.includes('event: response.in_progress')) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the stream ended early: ${text}`);
    text += decoder.decode(value, { stream: true });
  }
  const created = parseEvents(text.slice(0, text.lastIndexOf('\n\n') + 2)).find(
    (event) => event.event === 'response.created',
  );
  const rest = async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return text;
      text += decoder.decode(value, { stream: true });
    }
  };
  return { id: created?.data.response.id as string, rest };
}

const textOf = (item: { content: Array<{ text: string }> }) => item.content.map((part) => part.text).join('');

describe('stored responses under concurrent use', () => {
  it('gives each of many continuations of one response its own branch, with exactly its own history', async () => {
    const root = await create({ input: 'root question' });
    const branches = 24;
    const answers = await Promise.all(
      Array.from({ length: branches }, (_, index) =>
        postResponses(setup.gateway, {
          model: 'gpt-4o-mini',
          previous_response_id: root.id,
          input: `branch ${index}`,
        }).then(async (response) => ({ status: response.status, body: await jsonOf(response) })),
      ),
    );
    expect(answers.map((answer) => answer.status)).toEqual(Array(branches).fill(200));
    expect(new Set(answers.map((answer) => answer.body.id)).size).toBe(branches);
    // Each upstream request carried the root turn and its own input, nothing of a sibling.
    for (let index = 0; index < branches; index++) {
      const sent = setup.mock.requests.find((request) =>
        JSON.stringify(request.body.messages).includes(`"branch ${index}"`),
      );
      expect(sent?.body.messages).toEqual([
        { role: 'user', content: 'root question' },
        { role: 'assistant', content: 'Echo: root question' },
        { role: 'user', content: `branch ${index}` },
      ]);
    }
    // Each branch, continued again at once, replays its own conversation.
    const seconds = await Promise.all(
      answers.map((answer, index) =>
        postResponses(setup.gateway, {
          model: 'gpt-4o-mini',
          previous_response_id: answer.body.id,
          input: `again ${index}`,
        }).then(jsonOf),
      ),
    );
    const listed = await Promise.all(seconds.map((second) => inputItems(second.id, '?order=asc&limit=100')));
    listed.forEach((list, index) => {
      expect(list.status).toBe(200);
      expect(list.body.data.map(textOf)).toEqual([
        'root question',
        'Echo: root question',
        `branch ${index}`,
        `Echo: branch ${index}`,
        `again ${index}`,
      ]);
    });
  });

  it('deletes a response once when two deletions race: one 200, then 404s, never a 500', async () => {
    for (let round = 0; round < 5; round++) {
      const stored = await create({ input: `delete me ${round}` });
      const results = await Promise.all(
        Array.from({ length: 4 }, () =>
          getStored(setup.gateway, stored.id, setup.gateway.key, 'DELETE').then(async (response) => ({
            status: response.status,
            body: await jsonOf(response),
          })),
        ),
      );
      const statuses = results.map((result) => result.status).sort();
      expect(statuses).toEqual([200, 404, 404, 404]);
      for (const result of results.filter((result) => result.status === 404)) {
        expect(result.body.error.code).toBe('response_not_found');
      }
      expect((await getStored(setup.gateway, stored.id)).status).toBe(404);
    }
  });

  it('lets a continuation in flight finish when the response it continues is deleted meanwhile', async () => {
    const held = holdRequests(setup.mock);
    const root = await create({ input: 'to be deleted' });
    const continuation = postResponses(setup.gateway, {
      model: 'held',
      previous_response_id: root.id,
      input: 'go on',
    });
    await held.arrived(1);
    const deleted = await getStored(setup.gateway, root.id, setup.gateway.key, 'DELETE');
    expect(deleted.status).toBe(200);
    held.releaseAll();
    const answer = await continuation;
    expect(answer.status).toBe(200);
    const body = await jsonOf(answer);
    // Its own input only: what it continued is gone.
    const list = await inputItems(body.id, '?order=asc');
    expect(list.status).toBe(200);
    expect(list.body.data.map(textOf)).toEqual(['go on']);
    expect((await getStored(setup.gateway, root.id)).status).toBe(404);
  });

  it('gives a streaming response as far as it got, and holds a continuation sent before its end until then', async () => {
    const stream = await openHeldStream('stream-to-continue');
    // Older than a flush interval and its margin: the store no longer waits for the id on its own account.
    const createdAt = responseCreatedAt(stream.id) ?? 0;
    await waitFor(
      'the response id to be older than a flush interval and a second',
      () => Date.now() > createdAt + 1200,
    );
    const retrieved = await getStored(setup.gateway, stream.id);
    expect(retrieved.status).toBe(200);
    const inProgress = await jsonOf(retrieved);
    expect(inProgress).toMatchObject({ id: stream.id, object: 'response', status: 'in_progress' });
    const inFlight = setup.gateway.gateway.dataPlane.inFlight;
    const continuation = postResponses(setup.gateway, {
      model: 'gpt-4o-mini',
      previous_response_id: stream.id,
      input: 'and then?',
    });
    await waitFor('the continuation to be in flight', () => setup.gateway.gateway.dataPlane.inFlight > inFlight);
    gates.get('stream-to-continue')?.();
    await stream.rest();
    const answer = await continuation;
    expect(answer.status).toBe(200);
    expect(setup.mock.requests.at(-1)?.body.messages).toEqual([
      { role: 'user', content: 'stream-to-continue' },
      { role: 'assistant', content: 'first last' },
      { role: 'user', content: 'and then?' },
    ]);
  });

  it('keeps a response deleted while it was still streaming deleted once its stream ends', async () => {
    const stream = await openHeldStream('stream-to-delete');
    const id = stream.id;
    const deleted = await getStored(setup.gateway, id, setup.gateway.key, 'DELETE');
    expect(deleted.status).toBe(200);
    expect(await jsonOf(deleted)).toEqual({ id, object: 'response.deleted', deleted: true });
    gates.get('stream-to-delete')?.();
    expect(await stream.rest()).toContain('response.completed');
    // The stream's end must not bring it back, on a retrieval, a listing or a continuation (each writes what is queued).
    expect((await getStored(setup.gateway, id)).status).toBe(404);
    expect((await inputItems(id)).status).toBe(404);
    const continued = await postResponses(setup.gateway, {
      model: 'gpt-4o-mini',
      previous_response_id: id,
      input: 'more',
    });
    expect(continued.status).toBe(404);
  });
});
