import { describe, expect, it } from 'vitest';
import { postV1 } from './support/gateway.js';
import { useGatewayWithMock } from './support/gateway-fixture.js';
import { expectOpenAiError } from './support/openai-error.js';
import { waitFor } from './support/wait.js';

/**
 * POST /v1/embeddings refusing what it must: bad input (400 with OpenAI's body and `param`), a model that does not
 * embed (400 unsupported_model), authentication, model availability, limits, upstream failures and cancellation.
 */

const embeddingModel = (name: string, upstream: string) => ({
  name,
  provider: 'mock',
  upstream_model: upstream,
  capabilities: ['embeddings'],
});

const setup = useGatewayWithMock({
  providerMocks: true,
  models: [
    embeddingModel('text-embedding-3-small', 'embed'),
    embeddingModel('embed-500', 'error-500'),
    embeddingModel('embed-429', 'error-429'),
    embeddingModel('embed-400', 'error-400'),
    embeddingModel('embed-short', 'embed-short'),
    embeddingModel('embed-hang', 'hang'),
  ],
});

function postEmbeddings(body: unknown, headers: Record<string, string> = {}, signal?: AbortSignal) {
  return postV1(setup.gateway, 'embeddings', body, { headers, signal });
}

const model = 'text-embedding-3-small';

describe('POST /v1/embeddings: bad input', () => {
  const cases: Array<[string, unknown, string | null, string]> = [
    ['a body that is not an object', [1], null, 'invalid_type'],
    ['no model', { input: 'x' }, 'model', 'missing_required_parameter'],
    ['no input', { model }, 'input', 'missing_required_parameter'],
    ['an input of the wrong type', { model, input: { text: 'x' } }, 'input', 'invalid_type'],
    ['an empty text', { model, input: '' }, 'input', 'invalid_value'],
    ['an empty text in a list', { model, input: ['a', ''] }, 'input[1]', 'invalid_value'],
    ['an empty list', { model, input: [] }, 'input', 'empty_array'],
    ['texts and token arrays mixed', { model, input: ['a', [1]] }, 'input[1]', 'invalid_type'],
    ['an empty token array', { model, input: [[1], []] }, 'input[1]', 'empty_array'],
    ['a token that is not an id', { model, input: [1, -2] }, 'input[1]', 'invalid_value'],
    ['too many inputs', { model, input: Array.from({ length: 2049 }, () => 'x') }, 'input', 'array_above_max_length'],
    ['an unknown encoding', { model, input: 'x', encoding_format: 'int8' }, 'encoding_format', 'invalid_value'],
    ['dimensions below 1', { model, input: 'x', dimensions: 0 }, 'dimensions', 'integer_below_min_value'],
    ['dimensions not an integer', { model, input: 'x', dimensions: 1.5 }, 'dimensions', 'invalid_type'],
    ['a user that is not a string', { model, input: 'x', user: 7 }, 'user', 'invalid_type'],
  ];
  for (const [what, body, param, code] of cases) {
    it(`refuses ${what} with 400 naming ${param ?? 'nothing'}`, async () => {
      const before = setup.mock.requests.length;
      const error = await expectOpenAiError(await postEmbeddings(body), 400);
      expect(error).toMatchObject({ type: 'invalid_request_error', param, code });
      expect(setup.mock.requests.length).toBe(before);
    });
  }

  it('refuses a body that is not JSON', async () => {
    expect((await expectOpenAiError(await postEmbeddings('{"model":'), 400)).type).toBe('invalid_request_error');
  });
});

describe('POST /v1/embeddings: models', () => {
  it('refuses a chat model with 400 unsupported_model, whatever its provider', async () => {
    for (const chatModel of ['gpt-4o-mini', 'claude-mock', 'gemini-mock']) {
      const error = await expectOpenAiError(await postEmbeddings({ model: chatModel, input: 'x' }), 400);
      expect(error).toMatchObject({ code: 'unsupported_model', param: 'model' });
      expect(error.message).toContain('is not an embedding model');
    }
  });

  it('refuses an embedding model on chat completions with 400 unsupported_model', async () => {
    const response = await fetch(`${setup.gateway.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${setup.gateway.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
    });
    const error = await expectOpenAiError(response, 400);
    expect(error).toMatchObject({ code: 'unsupported_model', param: 'model' });
    expect(error.message).toContain('serves /v1/embeddings only');
  });

  it('answers 404 alike for unknown models and models the key may not call', async () => {
    const narrow = await setup.gateway.newKey({ models: ['gpt-4o-mini'] });
    const forbidden = await expectOpenAiError(
      await postEmbeddings({ model, input: 'x' }, { authorization: `Bearer ${narrow.key}` }),
      404,
    );
    const unknown = await expectOpenAiError(await postEmbeddings({ model: 'no-such-model', input: 'x' }), 404);
    expect(forbidden.code).toBe('model_not_found');
    expect(unknown.code).toBe('model_not_found');
  });

  it('needs a key', async () => {
    const response = await fetch(`${setup.gateway.baseUrl}/embeddings`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model, input: 'x' }),
    });
    expect(response.status).toBe(401);
  });
});

describe('POST /v1/embeddings: limits', () => {
  it('reserves the input against a tokens-per-minute limit', async () => {
    const { key } = await setup.gateway.newKey({ name: 'embed-tpm', limits: { tokensPerMinute: 100 } });
    const headers = { authorization: `Bearer ${key}` };
    expect((await postEmbeddings({ model, input: 'short' }, headers)).status).toBe(200);
    const refused = await postEmbeddings({ model, input: 'many words '.repeat(100) }, headers);
    const error = await expectOpenAiError(refused, 429);
    expect(error.message).toContain('Request too large');
  });

  it('counts against requests per minute', async () => {
    const { key } = await setup.gateway.newKey({ name: 'embed-rpm', limits: { requestsPerMinute: 1 } });
    const headers = { authorization: `Bearer ${key}` };
    expect((await postEmbeddings({ model, input: 'x' }, headers)).status).toBe(200);
    expect((await expectOpenAiError(await postEmbeddings({ model, input: 'x' }, headers), 429)).code).toBe(
      'rate_limit_exceeded',
    );
  });
});

describe('POST /v1/embeddings: upstream failures', () => {
  it('retries a failing upstream, then answers 502', async () => {
    const before = setup.mock.requests.length;
    const error = await expectOpenAiError(await postEmbeddings({ model: 'embed-500', input: 'x' }), 502);
    expect(error.code).toBe('upstream_error');
    expect(setup.mock.requests.length - before).toBe(3);
  });

  it('passes on a rate limit and a refusal of the request', async () => {
    expect((await postEmbeddings({ model: 'embed-429', input: 'x' })).status).toBe(429);
    const refused = await expectOpenAiError(await postEmbeddings({ model: 'embed-400', input: 'x' }), 400);
    expect(refused.message).toContain('mock upstream error 400');
  });

  it('answers 502 when the upstream sends fewer vectors than inputs', async () => {
    const error = await expectOpenAiError(await postEmbeddings({ model: 'embed-short', input: ['a', 'b'] }), 502);
    expect(error.code).toBe('upstream_malformed_response');
    expect(error.message).toContain('1 embeddings for 2 inputs');
  });

  it('stops the upstream call when the client goes away', async () => {
    const controller = new AbortController();
    const sent = postEmbeddings({ model: 'embed-hang', input: 'never answered' }, {}, controller.signal).catch(
      () => undefined,
    );
    const upstream = await waitFor('the request to reach the upstream', () =>
      setup.mock.requests.find((request) => request.body.input === 'never answered'),
    );
    controller.abort();
    await sent;
    await waitFor('the upstream request to be aborted', () => upstream.aborted);
    const row = await waitFor('the request-log row', () =>
      setup.gateway.gateway.database.db
        .selectFrom('request_log')
        .selectAll()
        .where('model', '=', 'embed-hang')
        .executeTakeFirst(),
    );
    expect(row).toMatchObject({ outcome: 'cancelled', status: 499 });
  });
});
