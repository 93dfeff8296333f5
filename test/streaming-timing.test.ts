import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';
import { describe, expect, it } from 'vitest';
import { chatBody, postChat, startTestGateway } from './support/gateway.js';
import { useGatewayWithMock } from './support/gateway-fixture.js';
import { holdRequests } from './support/held-requests.js';
import { parseStrictSse } from './support/sse.js';

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
    /** Sends one more content chunk on every open stream. */
    send(content: string) {
      const chunk = { ...finish, usage: undefined, choices: [{ index: 0, delta: { content }, finish_reason: null }] };
      for (const response of open) response.write(`data: ${JSON.stringify(chunk)}\n\n`);
    },
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

/** Reads a response body as it arrives: waits until the text so far contains a marker, then reads the rest. */
function streamReader(response: Response) {
  const reader = response.body?.getReader();
  if (!reader) throw new Error('no body');
  const decoder = new TextDecoder();
  let text = '';
  return {
    // No deadline of its own: a marker that never comes leaves the test to its timeout, as a stuck stream should.
    async until(marker: string): Promise<void> {
      while (!text.includes(marker)) {
        const { done, value } = await reader.read();
        if (done) throw new Error(`the stream ended without ${JSON.stringify(marker)}: ${text}`);
        text += decoder.decode(value, { stream: true });
      }
    },
    async rest(): Promise<string> {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return text + decoder.decode();
        text += decoder.decode(value, { stream: true });
      }
    },
  };
}

const setup = useGatewayWithMock({ config: { server: { stream_keepalive: '150ms' } } });

describe('stream timing', () => {
  it('forwards each chunk at once, never holding the stream back', async () => {
    // The upstream sends the next chunk only once the client has received the previous one: a gateway that held
    // chunks back (until the end, or until some buffer filled) would never get this stream to its end.
    const held = await startHoldingUpstream();
    const holding = await startTestGateway({
      mock: setup.mock,
      providers: [{ name: 'held', type: 'openai', base_url: held.baseUrl, timeouts: { idle: '5m' } }],
      models: [{ name: 'held-stream', provider: 'held', upstream_model: 'held-stream' }],
    });
    try {
      const response = await postChat(holding, chatBody('held-stream', { stream: true }));
      const body = streamReader(response);
      await body.until('"Hello"');
      for (let index = 0; index < 5; index++) {
        held.send(`w${index}`);
        await body.until(`"w${index}"`);
      }
      held.release();
      const { frames } = parseStrictSse(await body.rest());
      expect(frames.at(-1)?.data).toBe('[DONE]');
    } finally {
      held.release();
      await holding.close();
      await held.close();
    }
  });

  it('sends keepalive comments while the upstream is silent, then the answer', async () => {
    // The upstream holds its (non-streamed) answer until the client has seen three keepalives, 150 ms apart.
    const held = holdRequests(setup.mock);
    const response = await postChat(setup.gateway, chatBody('held', { stream: true }));
    expect(response.status).toBe(200);
    const body = streamReader(response);
    await body.until(': keepalive\n\n: keepalive\n\n: keepalive\n\n');
    held.releaseAll();
    const text = await body.rest();
    const { frames, keepalivesBeforeFirstEvent } = parseStrictSse(text);
    expect(keepalivesBeforeFirstEvent).toBeGreaterThanOrEqual(3);
    expect(frames.at(-1)?.data).toBe('[DONE]');
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
      mock: setup.mock,
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
        expect(parseStrictSse(text).frames.at(-1)?.data).toBe('[DONE]');
      }
    } finally {
      held.release();
      await dispatcher.close();
      await holding.close();
      await held.close();
    }
  }, 120_000);
});
