import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatBody, postChat, startTestGateway, type TestGateway } from './support/gateway.js';
import { type MockUpstream, startMockUpstream } from './support/mock-openai-upstream.js';

/** Chunks are forwarded as they arrive, and silence is filled with SSE comments. */

/** An OpenAI-compatible upstream that starts every stream with one chunk and holds it open until released. */
async function startHoldingUpstream() {
  const open: ServerResponse[] = [];
  let waiter: { count: number; resolve: () => void } | undefined;
  const server = createServer((incoming: IncomingMessage, response: ServerResponse) => {
    incoming.resume();
    incoming.on('end', () => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      const chunk = {
        id: 'chatcmpl-held',
        object: 'chat.completion.chunk',
        created: 1,
        model: 'held-stream',
        choices: [{ index: 0, delta: { role: 'assistant', content: 'Hello' }, finish_reason: null }],
      };
      response.write(`data: ${JSON.stringify(chunk)}\n\n`);
      open.push(response);
      if (waiter && open.length >= waiter.count) waiter.resolve();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const finish = {
    id: 'chatcmpl-held',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'held-stream',
    choices: [{ index: 0, delta: {}, finish_reason: 'stop' }],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  };
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    open: () => open.length,
    /** Resolves once `count` streams are open at the same time; rejects (a stuck test) after `deadlineMs`. */
    openAtLeast: (count: number, deadlineMs: number) =>
      new Promise<void>((resolve, reject) => {
        if (open.length >= count) return resolve();
        const timer = setTimeout(() => reject(new Error(`only ${open.length} of ${count} streams opened`)), deadlineMs);
        waiter = {
          count,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        };
      }),
    release() {
      for (const response of open.splice(0)) response.end(`data: ${JSON.stringify(finish)}\n\ndata: [DONE]\n\n`);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let mock: MockUpstream;
let gateway: TestGateway;

beforeAll(async () => {
  mock = await startMockUpstream();
  gateway = await startTestGateway({
    mock,
    config: { server: { stream_keepalive: '150ms' } },
  });
});

afterAll(async () => {
  await gateway.close();
  await mock.close();
});

describe('stream timing', () => {
  it('forwards each chunk at once, never holding the stream back', async () => {
    const started = performance.now();
    const response = await postChat(gateway, chatBody('slow-stream', { stream: true }));
    const reader = response.body?.getReader();
    if (!reader) throw new Error('no body');
    const decoder = new TextDecoder();
    const arrivals: Array<{ at: number; text: string }> = [];
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      arrivals.push({ at: performance.now() - started, text: decoder.decode(value) });
    }
    const firstWord = arrivals.find((arrival) => arrival.text.includes('w0 '));
    const lastWord = arrivals.find((arrival) => arrival.text.includes('w49 '));
    // The upstream paces 50 words 100 ms apart: the first must reach us long before the last, in reads of its own.
    expect((lastWord?.at ?? 0) - (firstWord?.at ?? 0)).toBeGreaterThan(3500);
    expect(arrivals.length).toBeGreaterThan(40);
  });

  it('sends keepalive comments while the upstream is silent, then the answer', async () => {
    // slow-json answers after 0.8 s, as one JSON body that the gateway turns into a stream.
    const response = await postChat(gateway, chatBody('slow-json', { stream: true }));
    expect(response.status).toBe(200);
    const text = await response.text();
    const keepalives = text.split('\n\n').filter((event) => event === ': keepalive');
    expect(keepalives.length).toBeGreaterThanOrEqual(3);
    expect(text.indexOf(': keepalive')).toBeLessThan(text.indexOf('data: {'));
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
    expect(text).not.toContain('"error"');
    expect(text).toContain('Echo: Say hello');
  });

  it('holds 300 streams open at once: none waits in the gateway for another to finish', async () => {
    // An upstream that starts each stream and holds it open until told: the streams can only all be open at once at
    // the upstream if the gateway waits for none of them to end first (a connection pool smaller than the number of
    // streams, the old default of 256, would never get there). Nothing here depends on the machine's speed.
    const count = 300;
    const held = await startHoldingUpstream();
    const holding = await startTestGateway({
      mock,
      providers: [{ name: 'held', type: 'openai', base_url: held.baseUrl, timeouts: { idle: '5m' } }],
      models: [{ name: 'held-stream', provider: 'held', upstream_model: 'held-stream' }],
    });
    const dispatcher = new Agent({ connections: count + 10 });
    try {
      const streams = Array.from({ length: count }, async () => {
        const response = await request(`${holding.baseUrl}/chat/completions`, {
          method: 'POST',
          dispatcher,
          headers: { authorization: `Bearer ${holding.key}`, 'content-type': 'application/json' },
          body: JSON.stringify(chatBody('held-stream', { stream: true })),
        });
        expect(response.statusCode).toBe(200);
        return response.body.text();
      });
      await held.openAtLeast(count, 110_000);
      expect(held.open()).toBe(count);
      held.release();
      for (const text of await Promise.all(streams)) {
        expect(text).toContain('Hello');
        expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
      }
    } finally {
      held.release();
      await dispatcher.close();
      await holding.close();
      await held.close();
    }
  }, 120_000);
});
