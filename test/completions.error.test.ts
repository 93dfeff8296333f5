import { describe, expect, it } from 'vitest';
import { jsonOf, postV1 } from './support/gateway.js';
import { useGatewayWithMock } from './support/gateway-fixture.js';
import { expectOpenAiError } from './support/openai-error.js';
import { readSse } from './support/sse.js';

/**
 * Legacy POST /v1/completions refusing what it must: bad input (400 with OpenAI's body and `param`), providers without
 * text completions (Anthropic, Gemini: 400 unsupported_endpoint), embedding models, limits, and failures before and
 * in the middle of a stream.
 */

const setup = useGatewayWithMock({
  providerMocks: true,
  models: [
    { name: 'text-embedding-3-small', provider: 'mock', upstream_model: 'embed', capabilities: ['embeddings'] },
    { name: 'claude-then-openai', provider: 'claude', upstream_model: 'mock', fallbacks: ['gpt-4o-mini'] },
  ],
});

function postCompletions(body: unknown, headers: Record<string, string> = {}) {
  return postV1(setup.gateway, 'completions', body, { headers });
}

const model = 'gpt-4o-mini';

describe('POST /v1/completions: bad input', () => {
  const cases: Array<[string, unknown, string | null, string]> = [
    ['no model', { prompt: 'x' }, 'model', 'missing_required_parameter'],
    ['no prompt', { model }, 'prompt', 'missing_required_parameter'],
    ['a prompt of the wrong type', { model, prompt: { text: 'x' } }, 'prompt', 'invalid_type'],
    ['an empty prompt list', { model, prompt: [] }, 'prompt', 'empty_array'],
    ['texts and tokens mixed', { model, prompt: ['a', [1]] }, 'prompt[1]', 'invalid_type'],
    ['a token that is not an id', { model, prompt: [1, 2.5] }, 'prompt[1]', 'invalid_value'],
    ['negative max_tokens', { model, prompt: 'x', max_tokens: -1 }, 'max_tokens', 'integer_below_min_value'],
    ['logprobs above 5', { model, prompt: 'x', logprobs: 6 }, 'logprobs', 'integer_above_max_value'],
    ['echo that is not a boolean', { model, prompt: 'x', echo: 'yes' }, 'echo', 'invalid_type'],
    ['a temperature above 2', { model, prompt: 'x', temperature: 3 }, 'temperature', 'decimal_above_max_value'],
    ['five stop sequences', { model, prompt: 'x', stop: ['a', 'b', 'c', 'd', 'e'] }, 'stop', 'array_above_max_length'],
    ['best_of below n', { model, prompt: 'x', n: 3, best_of: 2 }, 'best_of', 'invalid_value'],
    ['stream_options without stream', { model, prompt: 'x', stream_options: {} }, 'stream_options', 'invalid_value'],
    ['a suffix that is not a string', { model, prompt: 'x', suffix: 1 }, 'suffix', 'invalid_type'],
  ];
  for (const [what, body, param, code] of cases) {
    it(`refuses ${what} with 400 naming ${param}`, async () => {
      const before = setup.mock.requests.length;
      const error = await expectOpenAiError(await postCompletions(body), 400);
      expect(error).toMatchObject({ type: 'invalid_request_error', param, code });
      expect(setup.mock.requests.length).toBe(before);
    });
  }
});

describe('POST /v1/completions: models and providers', () => {
  it('refuses Anthropic and Gemini models with 400 unsupported_endpoint, calling neither', async () => {
    const before = setup.providerMocks.anthropic.requests.length + setup.providerMocks.gemini.requests.length;
    for (const [name, type] of [
      ['claude-mock', 'anthropic'],
      ['gemini-mock', 'gemini'],
    ]) {
      for (const stream of [false, true]) {
        const error = await expectOpenAiError(await postCompletions({ model: name, prompt: 'x', stream }), 400);
        expect(error).toMatchObject({ code: 'unsupported_endpoint', param: 'model' });
        expect(error.message).toContain(`(${type}), which has no legacy text completions`);
      }
    }
    expect(setup.providerMocks.anthropic.requests.length + setup.providerMocks.gemini.requests.length).toBe(before);
  });

  it('serves from a fallback that can when the model’s provider cannot', async () => {
    const response = await postCompletions({ model: 'claude-then-openai', prompt: 'Say hello', max_tokens: 2 });
    expect(response.status).toBe(200);
    expect((await jsonOf(response)).choices[0].text).toBe(' Echo: Say');
  });

  it('refuses an embedding model with 400 unsupported_model', async () => {
    const error = await expectOpenAiError(await postCompletions({ model: 'text-embedding-3-small', prompt: 'x' }), 400);
    expect(error).toMatchObject({ code: 'unsupported_model', param: 'model' });
  });

  it('answers 404 for unknown models', async () => {
    expect((await expectOpenAiError(await postCompletions({ model: 'nope', prompt: 'x' }), 404)).code).toBe(
      'model_not_found',
    );
  });
});

describe('POST /v1/completions: limits and failures', () => {
  it('reserves max_tokens (16 when unset) for each completion against tokens per minute', async () => {
    const { key } = await setup.gateway.newKey({ name: 'completions-tpm', limits: { tokensPerMinute: 100 } });
    const headers = { authorization: `Bearer ${key}` };
    expect((await postCompletions({ model, prompt: 'x' }, headers)).status).toBe(200);
    const refused = await postCompletions({ model, prompt: 'x', n: 7 }, headers);
    expect((await expectOpenAiError(refused, 429)).message).toContain('Request too large');
  });

  it('answers 502 after retries when the upstream fails, and passes on its refusal of the request', async () => {
    expect((await expectOpenAiError(await postCompletions({ model: 'error-500', prompt: 'x' }), 502)).code).toBe(
      'upstream_error',
    );
    expect((await postCompletions({ model: 'error-400', prompt: 'x' })).status).toBe(400);
  });

  it('reports a failure in the middle of a stream in-band, then [DONE]', async () => {
    const response = await postCompletions({ model: 'midstream-reset', prompt: 'Say hello', stream: true });
    expect(response.status).toBe(200);
    const events = await readSse(response);
    expect(events.at(-1)).toBe('[DONE]');
    const error = JSON.parse(events.at(-2) as string);
    expect(error.error).toMatchObject({ type: 'server_error' });
    const text = events
      .slice(0, -2)
      .map((event) => JSON.parse(event).choices[0].text)
      .join('');
    expect(text.length).toBeGreaterThan(0);
    expect(' Echo: Say hello'.startsWith(text)).toBe(true);
  });
});
