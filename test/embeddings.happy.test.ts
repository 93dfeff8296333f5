import { describe, expect, it } from 'vitest';
import { jsonOf, postV1, upstreamSecret, waitForLogRows } from './support/gateway.js';
import { useGatewayWithMock } from './support/gateway-fixture.js';
import { base64Of, mockDoubleEmbedding, mockEmbedding, mockInputTokens } from './support/mock-openai-embeddings.js';

/**
 * POST /v1/embeddings to an OpenAI-compatible upstream through the real gateway: the request forwarded with only the
 * model changed, vectors in the encoding the client asked for whatever the upstream answered, usage and cost in the
 * log, fallbacks that skip models that do not embed.
 */

const embeddingModel = (name: string, upstream: string, extra: Record<string, unknown> = {}) => ({
  name,
  provider: 'mock',
  upstream_model: upstream,
  capabilities: ['embeddings'],
  pricing: { input: 0.02, output: 0 },
  ...extra,
});

const setup = useGatewayWithMock({
  models: [
    embeddingModel('text-embedding-3-small', 'embed'),
    embeddingModel('embed-float-only', 'embed-float-only'),
    embeddingModel('embed-base64-only', 'embed-base64-only'),
    embeddingModel('embed-doubles', 'embed-doubles'),
    embeddingModel('embed-no-usage', 'embed-no-usage'),
    embeddingModel('embed-shuffled', 'embed-shuffled'),
    embeddingModel('embed-failing', 'error-503', { fallbacks: ['gpt-4o-mini', 'text-embedding-3-small'] }),
    { name: 'chat-and-embed', provider: 'mock', upstream_model: 'mock', capabilities: ['chat', 'embeddings'] },
  ],
});

function postEmbeddings(body: unknown, key = setup.gateway.key) {
  return postV1(setup.gateway, 'embeddings', body, { key });
}

function lastUpstreamRequest() {
  const request = setup.mock.requests.at(-1);
  if (!request) throw new Error('the mock received nothing');
  return request;
}

function decode(text: string): number[] {
  const bytes = Buffer.from(text, 'base64');
  return Array.from({ length: bytes.length / 4 }, (_, index) => bytes.readFloatLE(index * 4));
}

describe('POST /v1/embeddings to an OpenAI-compatible upstream', () => {
  it('forwards the request with only the model changed and answers the upstream’s vectors', async () => {
    const response = await postEmbeddings({
      model: 'text-embedding-3-small',
      input: ['first text', 'second text'],
      encoding_format: 'float',
      dimensions: 4,
      user: 'user-42',
      vendor_option: { kept: true },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(response.headers.get('x-request-id')).toMatch(/^req_/);
    const body = await jsonOf(response);
    expect(body).toEqual({
      object: 'list',
      data: [
        { object: 'embedding', index: 0, embedding: mockEmbedding('first text', 4) },
        { object: 'embedding', index: 1, embedding: mockEmbedding('second text', 4) },
      ],
      model: 'embed',
      usage: { prompt_tokens: 4, total_tokens: 4 },
    });
    const upstream = lastUpstreamRequest();
    expect(upstream.path).toBe('/v1/embeddings');
    expect(upstream.body).toEqual({
      model: 'embed',
      input: ['first text', 'second text'],
      encoding_format: 'float',
      dimensions: 4,
      user: 'user-42',
      vendor_option: { kept: true },
    });
    expect(upstream.headers.authorization).toBe(`Bearer ${upstreamSecret}`);
    expect(JSON.stringify(upstream.headers)).not.toContain(setup.gateway.key);
  });

  it('takes a string, a token array and token arrays', async () => {
    const single = await jsonOf(await postEmbeddings({ model: 'text-embedding-3-small', input: 'just one' }));
    expect(single.data).toEqual([{ object: 'embedding', index: 0, embedding: mockEmbedding('just one') }]);
    const tokens = await jsonOf(await postEmbeddings({ model: 'text-embedding-3-small', input: [1, 2, 3] }));
    expect(tokens.data).toEqual([{ object: 'embedding', index: 0, embedding: mockEmbedding([1, 2, 3]) }]);
    expect(lastUpstreamRequest().body.input).toEqual([1, 2, 3]);
    const arrays = await jsonOf(await postEmbeddings({ model: 'text-embedding-3-small', input: [[1, 2], [3]] }));
    expect(arrays.data.map((item: { embedding: number[] }) => item.embedding)).toEqual([
      mockEmbedding([1, 2]),
      mockEmbedding([3]),
    ]);
    expect(arrays.usage).toEqual({ prompt_tokens: 3, total_tokens: 3 });
  });

  it('answers base64 as asked, the upstream’s own bytes when it honoured the encoding', async () => {
    const body = await jsonOf(
      await postEmbeddings({ model: 'text-embedding-3-small', input: 'hello', encoding_format: 'base64' }),
    );
    expect(body.data[0].embedding).toBe(base64Of(mockEmbedding('hello')));
    expect(lastUpstreamRequest().body.encoding_format).toBe('base64');
  });

  it('converts when the upstream answered the other encoding than the one asked for', async () => {
    const base64 = await jsonOf(
      await postEmbeddings({ model: 'embed-float-only', input: ['a', 'b'], encoding_format: 'base64' }),
    );
    expect(base64.data.map((item: { embedding: string }) => decode(item.embedding))).toEqual([
      mockEmbedding('a'),
      mockEmbedding('b'),
    ]);
    const floats = await jsonOf(
      await postEmbeddings({ model: 'embed-base64-only', input: 'a', encoding_format: 'float' }),
    );
    expect(floats.data[0].embedding).toEqual(mockEmbedding('a'));
    // Without encoding_format the API answers floats.
    const unspecified = await jsonOf(await postEmbeddings({ model: 'embed-base64-only', input: 'a' }));
    expect(unspecified.data[0].embedding).toEqual(mockEmbedding('a'));
  });

  it('passes floats on exactly, and rounds them to float32 only when base64 is asked for', async () => {
    const floats = await jsonOf(await postEmbeddings({ model: 'embed-doubles', input: 'x' }));
    expect(floats.data[0].embedding).toEqual(mockDoubleEmbedding('x'));
    const base64 = await jsonOf(
      await postEmbeddings({ model: 'embed-doubles', input: 'x', encoding_format: 'base64' }),
    );
    expect(decode(base64.data[0].embedding)).toEqual(mockDoubleEmbedding('x').map((value) => Math.fround(value)));
  });

  it('puts vectors an upstream listed out of order back in input order', async () => {
    const body = await jsonOf(await postEmbeddings({ model: 'embed-shuffled', input: ['one', 'two', 'three'] }));
    expect(body.data.map((item: { index: number }) => item.index)).toEqual([0, 1, 2]);
    expect(body.data.map((item: { embedding: number[] }) => item.embedding)).toEqual([
      mockEmbedding('one'),
      mockEmbedding('two'),
      mockEmbedding('three'),
    ]);
  });

  it('logs the usage and its cost at the input price, estimated when the upstream reports none', async () => {
    const input = ['the quick brown fox', 'jumps'];
    const response = await postEmbeddings({ model: 'text-embedding-3-small', input });
    const requestId = response.headers.get('x-request-id') as string;
    const tokens = mockInputTokens(input[0] as string) + mockInputTokens(input[1] as string);
    const missing = await postEmbeddings({ model: 'embed-no-usage', input: 'sixteen chars..!' });
    const missingId = missing.headers.get('x-request-id') as string;
    expect((await jsonOf(missing)).usage).toEqual({ prompt_tokens: 4, total_tokens: 4 });
    const rows = await waitForLogRows(setup.gateway, [requestId, missingId]);
    const row = rows.find((candidate) => candidate.request_id === requestId);
    expect(row).toMatchObject({
      model: 'text-embedding-3-small',
      provider: 'mock',
      upstream_model: 'embed',
      status: 200,
      outcome: 'success',
      prompt_tokens: tokens,
      completion_tokens: 0,
      total_tokens: tokens,
      usage_estimated: 0,
    });
    expect(row?.cost_usd).toBeCloseTo((tokens * 0.02) / 1_000_000, 15);
    expect(rows.find((candidate) => candidate.request_id === missingId)).toMatchObject({
      prompt_tokens: 4,
      usage_estimated: 1,
    });
  });

  it('fails over to a fallback that embeds, skipping one that does not', async () => {
    const response = await postEmbeddings({ model: 'embed-failing', input: 'rescued' });
    expect(response.status).toBe(200);
    expect((await jsonOf(response)).data[0].embedding).toEqual(mockEmbedding('rescued'));
    const requestId = response.headers.get('x-request-id') as string;
    const [row] = await waitForLogRows(setup.gateway, [requestId]);
    expect(row).toMatchObject({ served_model: 'text-embedding-3-small' });
    const attempts = JSON.parse(String(row?.attempts)) as Array<{ model: string; outcome: string; code: string }>;
    expect(attempts.find((attempt) => attempt.model === 'gpt-4o-mini')).toMatchObject({
      outcome: 'skipped',
      code: 'unsupported_model',
    });
  });

  it('serves a model configured for both chat and embeddings on both endpoints', async () => {
    const embedded = await postEmbeddings({ model: 'chat-and-embed', input: 'both' });
    expect((await jsonOf(embedded)).data[0].embedding).toEqual(mockEmbedding('both'));
    const chat = await fetch(`${setup.gateway.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${setup.gateway.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'chat-and-embed', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(chat.status).toBe(200);
  });

  it('lists each model with what it may be used for', async () => {
    const response = await fetch(`${setup.gateway.baseUrl}/models`, {
      headers: { authorization: `Bearer ${setup.gateway.key}` },
    });
    const models = (await jsonOf(response)).data as Array<{ id: string; capabilities: string[] }>;
    expect(models.find((model) => model.id === 'text-embedding-3-small')?.capabilities).toEqual(['embeddings']);
    expect(models.find((model) => model.id === 'gpt-4o-mini')?.capabilities).toEqual(['chat']);
    expect(models.find((model) => model.id === 'chat-and-embed')?.capabilities).toEqual(['chat', 'embeddings']);
  });
});
