import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fullCollection } from '../src/server/reclaim-memory-when-idle.js';
import { startTestGateway, type TestGateway } from './support/gateway.js';
import { type MockUpstream, startMockUpstream } from './support/mock-openai-upstream.js';

/**
 * What an open stream keeps of its request. A stream can last minutes, and prompts of 100 KB and more are ordinary
 * (documents, agent transcripts): each copy of the prompt a stream holds is multiplied by every open stream. Once the
 * stream has produced content nothing fails over any more, so nothing of the prompt need stay but its size (for an
 * estimate of usage when the upstream reports none).
 */

const streams = 12;
const promptBytes = 1024 * 1024;

/** An upstream that reads and forgets each request body, starts a stream and holds it open until released. */
async function startHoldingUpstream() {
  const held: ServerResponse[] = [];
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    request.resume();
    request.on('end', () => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      const chunk = {
        id: 'chatcmpl-held',
        object: 'chat.completion.chunk',
        created: 1,
        model: 'held',
        choices: [{ index: 0, delta: { role: 'assistant', content: 'Hello' }, finish_reason: null }],
      };
      response.write(`data: ${JSON.stringify(chunk)}\n\n`);
      held.push(response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    held,
    release() {
      for (const response of held.splice(0)) response.end('data: [DONE]\n\n');
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A round of collection that frees less than this has found all there was to free. */
const settledBytes = 64 * 1024;

/**
 * Heap and array buffers in use once full collections stop freeing memory: collected round after round (each a turn
 * of the event loop apart, as the array-buffer sweeper finishes after its collection) until one frees less than
 * `settledBytes`. The rounds' bound only fails a test whose memory never settles.
 */
async function liveBytes(collect: () => void): Promise<number> {
  let previous = Number.POSITIVE_INFINITY;
  for (let round = 0; round < 100; round++) {
    collect();
    await new Promise((resolve) => setImmediate(resolve));
    const usage = process.memoryUsage();
    const live = usage.heapUsed + usage.arrayBuffers;
    if (previous - live < settledBytes) return live;
    previous = live;
  }
  throw new Error('memory in use did not settle after 100 full collections');
}

let mock: MockUpstream;
let upstream: Awaited<ReturnType<typeof startHoldingUpstream>>;
let gateway: TestGateway;

beforeAll(async () => {
  mock = await startMockUpstream();
  upstream = await startHoldingUpstream();
  gateway = await startTestGateway({
    mock,
    providers: [{ name: 'holding', type: 'openai', base_url: upstream.baseUrl, api_key: 'sk-holding' }],
    models: [{ name: 'held-stream', provider: 'holding', upstream_model: 'held' }],
  });
});

afterAll(async () => {
  upstream.release();
  await gateway.close();
  await upstream.close();
  await mock.close();
});

describe('an open stream', () => {
  it('keeps no copy of its prompt once under way', async () => {
    const collect = fullCollection();
    if (!collect) throw new Error('no full collection available');
    // One body for every request (the client side holds it once, before and during).
    const body = Buffer.from(
      JSON.stringify({
        model: 'held-stream',
        stream: true,
        messages: [{ role: 'user', content: 'x'.repeat(promptBytes) }],
      }),
    );
    const before = await liveBytes(collect);
    const responses = await Promise.all(
      Array.from(
        { length: streams },
        () =>
          new Promise<IncomingMessage>((resolve, reject) => {
            const url = new URL(`${gateway.baseUrl}/chat/completions`);
            const sent = httpRequest(
              url,
              {
                method: 'POST',
                headers: {
                  authorization: `Bearer ${gateway.key}`,
                  'content-type': 'application/json',
                  'content-length': body.length,
                },
              },
              (response) => {
                // Resolved at the first content: the stream is under way in the gateway.
                response.once('data', () => resolve(response));
              },
            );
            sent.on('error', reject);
            sent.end(body);
          }),
      ),
    );
    expect(responses.every((response) => response.statusCode === 200)).toBe(true);
    const during = await liveBytes(collect);
    const copiesPerStream = (during - before) / (streams * promptBytes);
    // Measured: 6.1 copies per stream when the handler, the body reader and undici all kept theirs; 1.1 with only the
    // parsed request kept; 0.15 now (what is left is the three sides of each stream, all in this process).
    expect(copiesPerStream).toBeLessThan(0.5);

    const ends = responses.map(
      (response) =>
        new Promise<string>((resolve) => {
          let text = '';
          response.setEncoding('utf8');
          response.on('data', (part: string) => {
            text += part;
          });
          response.on('end', () => resolve(text));
        }),
    );
    upstream.release();
    for (const text of await Promise.all(ends)) expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
  });
});
