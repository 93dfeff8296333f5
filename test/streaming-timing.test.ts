import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatBody, postChat, startTestGateway, type TestGateway } from './support/gateway.js';
import { type MockUpstream, startMockUpstream } from './support/mock-openai-upstream.js';

/** Chunks are forwarded as they arrive, and silence is filled with SSE comments. */

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
    // Each slow stream lasts 5 s. With a connection pool smaller than the number of streams (the old default was
    // 256), the streams beyond it would get their first word only after another stream ended.
    const count = 300;
    const dispatcher = new Agent({ connections: count + 10 });
    const started = performance.now();
    try {
      const timings = await Promise.all(
        Array.from({ length: count }, async () => {
          const response = await request(`${gateway.baseUrl}/chat/completions`, {
            method: 'POST',
            dispatcher,
            headers: { authorization: `Bearer ${gateway.key}`, 'content-type': 'application/json' },
            body: JSON.stringify(chatBody('slow-stream', { stream: true })),
          });
          expect(response.statusCode).toBe(200);
          let first = Number.POSITIVE_INFINITY;
          let last = Number.POSITIVE_INFINITY;
          let text = '';
          for await (const part of response.body) {
            text += part.toString();
            const now = performance.now() - started;
            if (first === Number.POSITIVE_INFINITY && text.includes('w0 ')) first = now;
            if (last === Number.POSITIVE_INFINITY && text.includes('w49 ')) last = now;
          }
          expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
          return { first, last };
        }),
      );
      // Every stream had its first word before any stream had its last: none waited for another to end.
      const latestFirst = Math.max(...timings.map((timing) => timing.first));
      const earliestLast = Math.min(...timings.map((timing) => timing.last));
      expect(latestFirst).toBeLessThan(earliestLast);
    } finally {
      await dispatcher.close();
    }
  }, 120_000);
});
