import { describe, expect, it } from 'vitest';
import { jsonOf, postV1, upstreamSecret, waitForLogRows } from './support/gateway.js';
import { useGatewayWithMock } from './support/gateway-fixture.js';
import { mockLogprob, mockTokens } from './support/mock-openai-text-completions.js';
import { readSse } from './support/sse.js';

/**
 * Legacy POST /v1/completions forwarded to an OpenAI-compatible upstream: the request with only the model changed
 * (echo, logprobs, suffix, best_of and unknown members as sent; usage always requested when streaming), the answer as
 * the upstream sent it, usage and cost in the log, fallbacks.
 */

const setup = useGatewayWithMock({
  models: [
    { name: 'instruct', provider: 'mock', upstream_model: 'mock', pricing: { input: 1.5, output: 2 } },
    { name: 'instruct-whole', provider: 'mock', upstream_model: 'mock', streaming: false },
    { name: 'instruct-failing', provider: 'mock', upstream_model: 'error-503', fallbacks: ['instruct'] },
  ],
});

function postCompletions(body: unknown) {
  return postV1(setup.gateway, 'completions', body);
}

function lastUpstreamRequest() {
  const request = setup.mock.requests.at(-1);
  if (!request) throw new Error('the mock received nothing');
  return request;
}

describe('POST /v1/completions to an OpenAI-compatible upstream', () => {
  it('forwards the request with only the model changed and answers the upstream’s completion', async () => {
    const response = await postCompletions({
      model: 'instruct',
      prompt: 'Once upon a time',
      suffix: ' The end.',
      max_tokens: 3,
      best_of: 2,
      temperature: 0,
      vendor_option: { kept: true },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    const body = await jsonOf(response);
    expect(body).toEqual({
      id: 'cmpl-mock123',
      object: 'text_completion',
      created: 1_700_000_000,
      model: 'mock',
      system_fingerprint: 'fp_mock',
      choices: [{ text: ' Echo: Once upon', index: 0, logprobs: null, finish_reason: 'length' }],
      usage: { prompt_tokens: 4, completion_tokens: 3, total_tokens: 7 },
    });
    const upstream = lastUpstreamRequest();
    expect(upstream.path).toBe('/v1/completions');
    expect(upstream.body).toEqual({
      model: 'mock',
      prompt: 'Once upon a time',
      suffix: ' The end.',
      max_tokens: 3,
      best_of: 2,
      temperature: 0,
      vendor_option: { kept: true },
    });
    expect(upstream.headers.authorization).toBe(`Bearer ${upstreamSecret}`);
  });

  it('passes echo with logprobs through: the prompt’s tokens first, the first one without a logprob', async () => {
    const body = await jsonOf(
      await postCompletions({ model: 'instruct', prompt: 'The sky is', echo: true, logprobs: 2, max_tokens: 1 }),
    );
    const choice = body.choices[0];
    expect(choice.text).toBe('The sky is Echo:');
    expect(choice.logprobs.tokens).toEqual([...mockTokens('The sky is'), ' Echo:']);
    expect(choice.logprobs.token_logprobs).toEqual([null, mockLogprob(1), mockLogprob(2), mockLogprob(3)]);
    expect(choice.logprobs.top_logprobs[0]).toBeNull();
    expect(Object.keys(choice.logprobs.top_logprobs[1])).toHaveLength(2);
    expect(choice.logprobs.text_offset).toEqual([0, 3, 7, 10]);
  });

  it('answers one choice per prompt and n', async () => {
    const body = await jsonOf(await postCompletions({ model: 'instruct', prompt: ['a', 'b'], n: 2, max_tokens: 1 }));
    expect(body.choices.map((choice: { index: number }) => choice.index)).toEqual([0, 1, 2, 3]);
    const tokens = await jsonOf(await postCompletions({ model: 'instruct', prompt: [[1, 2], [3]], max_tokens: 2 }));
    expect(tokens.choices).toHaveLength(2);
    expect(lastUpstreamRequest().body.prompt).toEqual([[1, 2], [3]]);
  });

  it('streams the upstream’s chunks, asking for usage upstream and showing it only when asked for', async () => {
    const response = await postCompletions({ model: 'instruct', prompt: 'Say hello', stream: true });
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = await readSse(response);
    expect(events.at(-1)).toBe('[DONE]');
    const chunks = events.slice(0, -1).map((event) => JSON.parse(event));
    expect(chunks.every((chunk) => chunk.object === 'text_completion' && chunk.usage === undefined)).toBe(true);
    expect(chunks.map((chunk) => chunk.choices[0]?.text ?? '').join('')).toBe(' Echo: Say hello');
    expect(chunks.at(-1).choices[0].finish_reason).toBe('stop');
    expect(lastUpstreamRequest().body.stream_options).toEqual({ include_usage: true });

    const withUsage = await readSse(
      await postCompletions({
        model: 'instruct',
        prompt: 'Say hello',
        stream: true,
        stream_options: { include_usage: true },
        echo: true,
        logprobs: 1,
      }),
    );
    const last = JSON.parse(withUsage.at(-2) as string);
    expect(last.choices).toEqual([]);
    expect(last.usage).toEqual({ prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 });
    const first = JSON.parse(withUsage[0] as string);
    expect(first.choices[0]).toMatchObject({ text: 'Say', logprobs: { tokens: ['Say'], token_logprobs: [null] } });
  });

  it('streams a whole completion for a model configured with streaming: false', async () => {
    const events = await readSse(
      await postCompletions({ model: 'instruct-whole', prompt: 'Say hello', stream: true, max_tokens: 2 }),
    );
    expect(lastUpstreamRequest().body.stream).toBeUndefined();
    const chunks = events.slice(0, -1).map((event) => JSON.parse(event));
    expect(chunks.map((chunk) => chunk.choices[0]?.text ?? '').join('')).toBe(' Echo: Say');
    expect(events.at(-1)).toBe('[DONE]');
  });

  it('logs usage and cost, estimated when the upstream reports none', async () => {
    const response = await postCompletions({ model: 'instruct', prompt: 'Count these words please', max_tokens: 2 });
    const requestId = response.headers.get('x-request-id') as string;
    const missing = await postCompletions({ model: 'no-usage', prompt: 'abcdefgh', max_tokens: 2 });
    const missingId = missing.headers.get('x-request-id') as string;
    expect((await jsonOf(missing)).usage.prompt_tokens).toBe(2);
    const rows = await waitForLogRows(setup.gateway, [requestId, missingId]);
    const row = rows.find((candidate) => candidate.request_id === requestId);
    expect(row).toMatchObject({ model: 'instruct', prompt_tokens: 4, completion_tokens: 2, usage_estimated: 0 });
    expect(row?.cost_usd).toBeCloseTo((4 * 1.5 + 2 * 2) / 1_000_000, 15);
    expect(rows.find((candidate) => candidate.request_id === missingId)).toMatchObject({ usage_estimated: 1 });
  });

  it('fails over to a fallback', async () => {
    const response = await postCompletions({ model: 'instruct-failing', prompt: 'rescued', max_tokens: 1 });
    expect(response.status).toBe(200);
    const [row] = await waitForLogRows(setup.gateway, [response.headers.get('x-request-id') as string]);
    expect(row).toMatchObject({ served_model: 'instruct' });
  });
});
