import { describe, expect, it } from 'vitest';
import { jsonOf, postV1, waitForLogRows } from './support/gateway.js';
import { useGatewayWithMock } from './support/gateway-fixture.js';
import { mockEmbedding, mockInputTokens } from './support/mock-openai-embeddings.js';

/**
 * POST /v1/embeddings translated for Gemini: `batchEmbedContents` with at most 100 texts per call (larger requests
 * split and reassembled in input order), `dimensions` as `outputDimensionality`, vectors in the client's encoding,
 * usage from usageMetadata when the model reports it and estimated otherwise, token input refused.
 */

// The Gemini mock upstream behind provider `google` (its key: gemini-mock-key).
const setup = useGatewayWithMock({
  providerMocks: true,
  models: [
    {
      name: 'gemini-embedding',
      provider: 'google',
      upstream_model: 'gemini-embedding-001',
      capabilities: ['embeddings'],
      pricing: { input: 0.15, output: 0 },
    },
    {
      name: 'gemini-embedding-usage',
      provider: 'google',
      upstream_model: 'embed-usage',
      capabilities: ['embeddings'],
    },
  ],
});

function postEmbeddings(body: unknown) {
  return postV1(setup.gateway, 'embeddings', body);
}

function decode(text: string): number[] {
  const bytes = Buffer.from(text, 'base64');
  return Array.from({ length: bytes.length / 4 }, (_, index) => bytes.readFloatLE(index * 4));
}

describe('POST /v1/embeddings to Gemini', () => {
  it('sends one batchEmbedContents call with the texts and outputDimensionality', async () => {
    const before = setup.providerMocks.gemini.requests.length;
    const response = await postEmbeddings({ model: 'gemini-embedding', input: ['alpha', 'beta'], dimensions: 5 });
    expect(response.status).toBe(200);
    const body = await jsonOf(response);
    expect(body).toEqual({
      object: 'list',
      data: [
        { object: 'embedding', index: 0, embedding: mockEmbedding('alpha', 5) },
        { object: 'embedding', index: 1, embedding: mockEmbedding('beta', 5) },
      ],
      model: 'gemini-embedding',
      usage: { prompt_tokens: 3, total_tokens: 3 },
    });
    const calls = setup.providerMocks.gemini.requests.slice(before);
    expect(calls).toHaveLength(1);
    expect(calls[0]?.path).toBe('/v1beta/models/gemini-embedding-001:batchEmbedContents');
    expect(calls[0]?.headers['x-goog-api-key']).toBe('gemini-mock-key');
    expect(calls[0]?.body).toEqual({
      requests: [
        { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'alpha' }] }, outputDimensionality: 5 },
        { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'beta' }] }, outputDimensionality: 5 },
      ],
    });
  });

  it('splits more than 100 texts into batches and reassembles the vectors in input order', async () => {
    const input = Array.from({ length: 250 }, (_, index) => `text number ${index}`);
    const before = setup.providerMocks.gemini.requests.length;
    const body = await jsonOf(await postEmbeddings({ model: 'gemini-embedding', input, encoding_format: 'base64' }));
    const calls = setup.providerMocks.gemini.requests.slice(before);
    expect(calls.map((call) => call.body.requests.length)).toEqual([100, 100, 50]);
    expect(calls[2]?.body.requests[0].content.parts[0].text).toBe('text number 200');
    expect(body.data).toHaveLength(250);
    body.data.forEach((item: { index: number; embedding: string }, position: number) => {
      expect(item.index).toBe(position);
      expect(decode(item.embedding)).toEqual(mockEmbedding(`text number ${position}`));
    });
  });

  it('logs usage the model reported across batches, and an estimate when it reported none', async () => {
    const input = Array.from({ length: 120 }, (_, index) => `two words${index}`);
    const reported = await postEmbeddings({ model: 'gemini-embedding-usage', input });
    const reportedId = reported.headers.get('x-request-id') as string;
    const tokens = input.reduce((total, text) => total + mockInputTokens(text), 0);
    expect((await jsonOf(reported)).usage).toEqual({ prompt_tokens: tokens, total_tokens: tokens });
    const estimated = await postEmbeddings({ model: 'gemini-embedding', input: 'twelve chars' });
    const estimatedId = estimated.headers.get('x-request-id') as string;
    const rows = await waitForLogRows(setup.gateway, [reportedId, estimatedId]);
    expect(rows.find((row) => row.request_id === reportedId)).toMatchObject({
      provider: 'google',
      prompt_tokens: tokens,
      usage_estimated: 0,
    });
    const estimatedRow = rows.find((row) => row.request_id === estimatedId);
    expect(estimatedRow).toMatchObject({ prompt_tokens: 3, usage_estimated: 1 });
    expect(estimatedRow?.cost_usd).toBeCloseTo((3 * 0.15) / 1_000_000, 15);
  });

  it('refuses token input with 400 naming input, without calling Gemini', async () => {
    const before = setup.providerMocks.gemini.requests.length;
    for (const input of [
      [1, 2, 3],
      [[1], [2]],
    ]) {
      const response = await postEmbeddings({ model: 'gemini-embedding', input });
      expect(response.status).toBe(400);
      const { error } = await jsonOf(response);
      expect(error).toMatchObject({ code: 'unsupported_value', param: 'input', type: 'invalid_request_error' });
      expect(error.message).toContain('embeds text only');
    }
    expect(setup.providerMocks.gemini.requests.length).toBe(before);
  });
});
