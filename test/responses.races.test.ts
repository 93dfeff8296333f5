import { describe, expect, it } from 'vitest';
import { idCreatedAt, responseCreatedAt } from '../src/api/v1/responses/ids.js';
import { jsonOf } from './support/gateway.js';
import { useGatewayWithMock } from './support/gateway-fixture.js';
import { holdRequests } from './support/held-requests.js';
import { createHeldStreams, openHeldStream } from './support/held-stream.js';
import { getStored, postResponses } from './support/responses.js';
import { waitFor } from './support/wait.js';

/**
 * The stored state of /v1/responses under concurrent use: the same call fired many times at once, then invariants
 * checked (every branch of a conversation its own, nothing lost or interleaved; a response deleted once; a response
 * deleted while it streams stays deleted).
 */

const streams = createHeldStreams();

const setup = useGatewayWithMock({
  models: [{ name: 'gate-stream', provider: 'mock-patient', upstream_model: 'gate-stream' }],
  upstreamHandlers: { 'gate-stream': streams.handler },
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
    const stream = await openHeldStream(setup.gateway, streams, 'stream-to-continue');
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
    streams.release('stream-to-continue');
    await stream.rest();
    const answer = await continuation;
    expect(answer.status).toBe(200);
    expect(setup.mock.requests.at(-1)?.body.messages).toEqual([
      { role: 'user', content: 'stream-to-continue' },
      { role: 'assistant', content: 'first last' },
      { role: 'user', content: 'and then?' },
    ]);
  });

  it('holds an item_reference to the output of a response still streaming until its end, as a continuation', async () => {
    const stream = await openHeldStream(setup.gateway, streams, 'stream-to-reference');
    const inProgress = await waitFor('the message to be in the streaming response', async () => {
      const body = await jsonOf(await getStored(setup.gateway, stream.id));
      return body.output?.[0]?.id ? body : undefined;
    });
    const itemId: string = inProgress.output[0].id;
    // Older than a flush interval and its margin: the store no longer waits for the id on its own account.
    const createdAt = idCreatedAt(itemId) ?? 0;
    await waitFor('the item id to be older than a flush interval and a second', () => Date.now() > createdAt + 1200);
    const inFlight = setup.gateway.gateway.dataPlane.inFlight;
    const referencing = postResponses(setup.gateway, {
      model: 'gpt-4o-mini',
      input: [
        { type: 'item_reference', id: itemId },
        { role: 'user', content: 'and then?' },
      ],
    });
    let answered = false;
    void referencing.then(() => {
      answered = true;
    });
    // In flight (or already answered, which it must not be before the stream ends: the status below tells).
    await waitFor(
      'the reference to be in flight',
      () => answered || setup.gateway.gateway.dataPlane.inFlight > inFlight,
    );
    streams.release('stream-to-reference');
    await stream.rest();
    const answer = await referencing;
    expect(answer.status).toBe(200);
    // The item as the stream ended, not as it was when referenced.
    expect(setup.mock.requests.at(-1)?.body.messages).toEqual([
      { role: 'assistant', content: 'first last' },
      { role: 'user', content: 'and then?' },
    ]);
  });

  it('keeps a response deleted while it was still streaming deleted once its stream ends', async () => {
    const stream = await openHeldStream(setup.gateway, streams, 'stream-to-delete');
    const id = stream.id;
    const deleted = await getStored(setup.gateway, id, setup.gateway.key, 'DELETE');
    expect(deleted.status).toBe(200);
    expect(await jsonOf(deleted)).toEqual({ id, object: 'response.deleted', deleted: true });
    streams.release('stream-to-delete');
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

  it('stores a stream its client left as failed, with the output it had, never as completed', async () => {
    const stream = await openHeldStream(setup.gateway, streams, 'stream-left');
    await stream.cancel();
    const stored = await waitFor('the stream to end and be stored', async () => {
      const response = await getStored(setup.gateway, stream.id);
      const body = await jsonOf(response);
      return response.status === 200 && body.status !== 'in_progress' ? body : undefined;
    });
    expect(stored).toMatchObject({
      id: stream.id,
      status: 'failed',
      completed_at: null,
      error: { code: 'client_closed_request' },
      output: [{ type: 'message', status: 'incomplete', content: [{ type: 'output_text', text: 'first ' }] }],
    });
  });

  it('refuses a cursor whose item was deleted between two pages, rather than starting the list again', async () => {
    const root = await create({ input: 'page root' });
    const next = await create({ previous_response_id: root.id, input: 'page next' });
    const first = await inputItems(next.id, '?order=asc&limit=1');
    expect(first.body.data.map(textOf)).toEqual(['page root']);
    expect(first.body.has_more).toBe(true);
    expect((await getStored(setup.gateway, root.id, setup.gateway.key, 'DELETE')).status).toBe(200);
    const second = await inputItems(next.id, `?order=asc&limit=1&after=${first.body.last_id}`);
    expect(second.status).toBe(400);
    expect(second.body.error).toMatchObject({ code: 'invalid_value', param: 'after' });
    // What is left of the conversation still lists.
    expect((await inputItems(next.id, '?order=asc')).body.data.map(textOf)).toEqual(['page next']);
  });

  it('lists every item once when the input repeats an id of the conversation or of itself, page by page', async () => {
    const root = await create({ input: 'dup root' });
    const repeated = await create({
      previous_response_id: root.id,
      input: [
        { type: 'item_reference', id: root.output[0].id },
        { id: 'msg_client_1', type: 'message', role: 'user', content: 'one' },
        { id: 'msg_client_1', type: 'message', role: 'user', content: 'two' },
        { role: 'user', content: 'dup last' },
      ],
    });
    const all = await inputItems(repeated.id, '?order=asc&limit=100');
    expect(all.body.data.map(textOf)).toEqual([
      'dup root',
      'Echo: dup root',
      'Echo: dup root',
      'one',
      'two',
      'dup last',
    ]);
    // Paged one by one as an SDK's auto-pagination does: each item once, then the end.
    for (const order of ['asc', 'desc']) {
      const seen: string[] = [];
      let after: string | null = null;
      for (let page = 0; page <= all.body.data.length; page++) {
        const listed = await inputItems(repeated.id, `?order=${order}&limit=1${after ? `&after=${after}` : ''}`);
        expect(listed.status).toBe(200);
        seen.push(...listed.body.data.map((item: { id: string }) => item.id));
        if (!listed.body.has_more) break;
        after = listed.body.last_id;
      }
      expect(seen).toHaveLength(all.body.data.length);
      expect(new Set(seen).size).toBe(seen.length);
    }
    // The replayed conversation still carries the repeated items as they were sent (one assistant turn: one message).
    await create({ previous_response_id: repeated.id, input: 'after dup' });
    expect(setup.mock.requests.at(-1)?.body.messages).toEqual([
      { role: 'user', content: 'dup root' },
      { role: 'assistant', content: 'Echo: dup rootEcho: dup root' },
      { role: 'user', content: 'one' },
      { role: 'user', content: 'two' },
      { role: 'user', content: 'dup last' },
      { role: 'assistant', content: 'Echo: dup last' },
      { role: 'user', content: 'after dup' },
    ]);
  });
});
