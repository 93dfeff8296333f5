import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../src/accounts/service.js';
import { responseCreatedAt } from '../src/api/v1/responses/ids.js';
import { jsonOf, startTestGateway, type TestGateway } from './support/gateway.js';
import { type MockUpstream, type RecordedRequest, startMockUpstream } from './support/mock-openai-upstream.js';
import { getStored, parseEvents, postResponses, type ReadEvent } from './support/responses.js';

/**
 * Two gateways on one database, as two nodes behind a load balancer, and a stream forwarded natively (an upstream that
 * speaks Responses itself) held after its first events: the second node knows of it from its `response.created` on,
 * although the first writes its stored responses only every few seconds, as it knows of a translated stream.
 */

let mock: MockUpstream;
let first: TestGateway;
let second: TestGateway;
/** A key of another account, on the second node. */
let strangerKey: string;
const nativeModel = {
  name: 'native-held',
  provider: 'mock-patient',
  upstream_model: 'native-held',
  responses_api: 'native',
};
const fixtures = path.resolve(import.meta.dirname, 'fixtures/responses');
const nativeSse = readFileSync(path.join(fixtures, 'native-stream.sse'), 'utf8');
const nativeJson = readFileSync(path.join(fixtures, 'native-response.json'), 'utf8');
/** The rest of each held stream, by its input (its marker). */
const gates = new Map<string, () => void>();

/**
 * A native upstream's stream under an id shaped like OpenAI's (no time the gateway can read in it), held after its
 * `response.created` and `response.in_progress` until the test releases it; a JSON request (a continuation) is
 * answered at once.
 */
function answerHeld(request: RecordedRequest, response: ServerResponse): void {
  const id = `resp_68af4030592c${randomBytes(16).toString('hex')}`;
  if (request.body.stream !== true) {
    const text = nativeJson.replace('resp_68f0native', id);
    response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    response.end(text);
    return;
  }
  const events = nativeSse.replaceAll('resp_68f0native', id);
  const marker = String(request.body.input);
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  const blocks = events.split('\n\n');
  response.write(`${blocks.slice(0, 2).join('\n\n')}\n\n`);
  gates.set(marker, () => {
    if (!response.destroyed) response.end(blocks.slice(2).join('\n\n'));
  });
}

/** A held native stream opened on `gateway` and read up to its `response.in_progress`. */
async function openNativeStream(gateway: TestGateway, marker: string) {
  const response = await postResponses(gateway, { model: 'native-held', stream: true, input: marker });
  expect(response.status).toBe(200);
  const reader = response.body?.getReader();
  if (!reader) throw new Error('no body');
  const decoder = new TextDecoder();
  let text = '';
  while (!text.includes('event: response.in_progress')) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the stream ended early: ${text}`);
    text += decoder.decode(value, { stream: true });
  }
  const created = parseEvents(text.slice(0, text.lastIndexOf('\n\n') + 2)).find(
    (event) => event.event === 'response.created',
  );
  const rest = async (): Promise<ReadEvent[]> => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return parseEvents(text);
      text += decoder.decode(value, { stream: true });
    }
  };
  return { id: created?.data.response.id as string, rest };
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

beforeAll(async () => {
  mock = await startMockUpstream();
  mock.on('native-held', answerHeld);
  // Writes every 3 s: long after the second node is asked.
  const config = { request_log: { flush_interval: '3s' } };
  first = await startTestGateway({ mock, models: [nativeModel], config });
  second = await startTestGateway({
    mock,
    dataDir: first.dataDir,
    database: first.database,
    models: [nativeModel],
    config,
  });
  await createAccount(second.gateway.database.db, { name: 'globex' });
  strangerKey = (await second.newKey({ account: 'globex' })).key;
});

afterAll(async () => {
  for (const release of gates.values()) release();
  await second?.close();
  await first?.close();
  await mock?.close();
});

describe('natively forwarded streams across nodes', () => {
  it('are retrieved on another node from their first event, continued there once ended, and whole', async () => {
    const marker = 'Held: retrieve me on the other node.';
    const stream = await openNativeStream(first, marker);
    const retrieved = await getStored(second, stream.id, first.key);
    expect(retrieved.status).toBe(200);
    expect(await jsonOf(retrieved)).toMatchObject({ id: stream.id, status: 'in_progress', store: true });
    // The gateway's own id, dated when the stream began: the other node could tell it might not be written yet.
    expect(responseCreatedAt(stream.id)).toBeLessThanOrEqual(Date.now());
    // Another account's read is the 404 of a response that never was.
    const stranger = await getStored(second, stream.id, strangerKey);
    expect(stranger.status).toBe(404);
    expect((await jsonOf(stranger)).error.code).toBe('response_not_found');
    // Not ended yet: said so, not "not found".
    const tooSoon = await postResponses(
      second,
      { model: 'native-held', previous_response_id: stream.id, input: 'Too soon.' },
      first.key,
    );
    expect(tooSoon.status).toBe(409);
    expect((await jsonOf(tooSoon)).error).toMatchObject({
      code: 'response_in_progress',
      param: 'previous_response_id',
    });
    const listedTooSoon = await getStored(second, `${stream.id}/input_items`, first.key);
    expect(listedTooSoon.status).toBe(409);
    expect((await jsonOf(listedTooSoon)).error).toMatchObject({ code: 'response_in_progress', param: 'response_id' });

    gates.get(marker)?.();
    const events = await stream.rest();
    const completed = events.find((event) => event.event === 'response.completed')?.data.response;
    // Every event's response carries the one id the client was given.
    const ids = events.filter((event) => event.data.response).map((event) => event.data.response.id);
    expect(new Set(ids)).toEqual(new Set([stream.id]));

    const final = await jsonOf(await getStored(second, stream.id, first.key));
    expect(final).toMatchObject({ id: stream.id, status: 'completed', store: true });
    expect(final.output).toEqual(completed.output);
    const listed = await getStored(second, `${stream.id}/input_items`, first.key);
    expect(listed.status).toBe(200);
    expect((await jsonOf(listed)).data).toMatchObject([{ role: 'user', content: [{ text: marker }] }]);
    // Continued natively on the other node: the history goes upstream as input, the id never does.
    const continued = await postResponses(
      second,
      { model: 'native-held', previous_response_id: stream.id, input: 'Go on.' },
      first.key,
    );
    expect(continued.status).toBe(200);
    const sent = mock.requests.at(-1)?.body as Record<string, unknown>;
    expect(sent.previous_response_id).toBeUndefined();
    const input = sent.input as Array<Record<string, unknown>>;
    expect(input.map((item) => item.type ?? item.role)).toEqual(['message', 'reasoning', 'message', 'user']);
    expect(input[1]?.encrypted_content).toBe('gAAAAABo-encrypted');
    expect((await jsonOf(await getStored(second, (await jsonOf(continued)).id, first.key))).previous_response_id).toBe(
      stream.id,
    );
  });

  it('are deleted from another node from their first event, for good', async () => {
    const marker = 'Held: delete me on the other node.';
    const stream = await openNativeStream(first, marker);
    const deleted = await getStored(second, stream.id, first.key, 'DELETE');
    expect(deleted.status).toBe(200);
    expect(await jsonOf(deleted)).toEqual({ id: stream.id, object: 'response.deleted', deleted: true });
    expect((await getStored(second, stream.id, first.key, 'DELETE')).status).toBe(404);
    // The node streaming it reads its row, once written, before answering for it: deleted there too.
    expect((await getStored(first, stream.id, first.key)).status).toBe(404);

    gates.get(marker)?.();
    const events = await stream.rest();
    expect(events.map((event) => event.event)).toContain('response.completed');
    expect(await stateOf(stream.id)).toBe('deleted');
    for (const node of [first, second]) {
      expect((await getStored(node, stream.id, first.key)).status).toBe(404);
      const continued = await postResponses(
        node,
        { model: 'native-held', previous_response_id: stream.id, input: 'Gone?' },
        first.key,
      );
      expect((await jsonOf(continued)).error.code).toBe('previous_response_not_found');
    }
  });
});
