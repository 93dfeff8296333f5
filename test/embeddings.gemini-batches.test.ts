import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postV1, upstreamSecret, waitForLogRows } from './support/gateway.js';
import { useGatewayWithMock } from './support/gateway-fixture.js';
import { type MockServer, type RecordedRequest, sendJson, startMockServer } from './support/mock-server.js';
import { expectOpenAiError } from './support/openai-error.js';
import { waitFor } from './support/wait.js';

/**
 * A Gemini embeddings request split into several batchEmbedContents calls sent at once: when one fails, the gateway
 * aborts the others (their answers could no longer be used; they would hold connections and spend the upstream's
 * quota) and answers the failure once. The upstream here holds every batch until the gateway hangs up, except the one
 * whose first text is `fail`, which it refuses once all the batches have arrived.
 */

interface BatchUpstream {
  server: MockServer;
  held: Array<{ request: RecordedRequest; response: ServerResponse }>;
}

const upstream: Partial<BatchUpstream> = {};

beforeAll(async () => {
  const held: BatchUpstream['held'] = [];
  upstream.held = held;
  let failing: ServerResponse | undefined;
  const refuseWhenAllArrived = () => {
    if (failing && held.length === 3) {
      sendJson(failing, 400, { error: { code: 400, message: 'Invalid text', status: 'INVALID_ARGUMENT' } });
    }
  };
  upstream.server = await startMockServer((request, response) => {
    const first = request.body.requests?.[0]?.content?.parts?.[0]?.text;
    if (first === 'fail') failing = response;
    else held.push({ request, response });
    refuseWhenAllArrived();
  });
});

afterAll(async () => {
  await upstream.server?.close();
});

const setup = useGatewayWithMock(() => ({
  providers: [
    {
      name: 'batching-gemini',
      type: 'gemini',
      base_url: `${upstream.server?.url}/v1beta`,
      api_key: upstreamSecret,
    },
  ],
  models: [
    {
      name: 'batched-embedding',
      provider: 'batching-gemini',
      upstream_model: 'gemini-embedding-001',
      capabilities: ['embeddings'],
      retry: { attempts: 0 },
    },
  ],
}));

describe('a Gemini embeddings request split into batches, one of which fails', () => {
  it('aborts the other batches and answers the failure once', async () => {
    // Four batches of 100 (the Gemini cap), sent at once; the third is refused.
    const input = Array.from({ length: 400 }, (_, index) => (index === 200 ? 'fail' : `text ${index}`));
    const response = await postV1(setup.gateway, 'embeddings', { model: 'batched-embedding', input });
    const error = await expectOpenAiError(response, 400);
    expect(error.message).toContain('Invalid text');
    const held = upstream.held ?? [];
    try {
      await waitFor('the three other batches to be aborted', () =>
        held.every(({ request }) => request.aborted) ? held.length : false,
      );
    } finally {
      // Whatever happened, no batch stays held (the gateway's close would wait for it).
      for (const { response: answer } of held) answer.destroy();
    }
    expect(held.map(({ request }) => request.aborted)).toEqual([true, true, true]);
    expect(held.filter(({ response: answer }) => answer.writableFinished)).toHaveLength(0);
    expect(upstream.server?.requests).toHaveLength(4);
    const rows = await waitForLogRows(setup.gateway, [response.headers.get('x-request-id') ?? '']);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.status).toBe(400);
  });
});
