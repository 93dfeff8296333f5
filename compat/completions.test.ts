import OpenAI from 'openai';
import { beforeAll, describe, expect, it } from 'vitest';
import { useGatewayWithMock } from '../test/support/gateway-fixture.js';
import { mockLogprob, mockTokens } from '../test/support/mock-openai-text-completions.js';

/** The openai npm SDK's legacy `completions.create` through the gateway: JSON, a stream, echo with logprobs. */

const setup = useGatewayWithMock({
  models: [{ name: 'gpt-3.5-turbo-instruct', provider: 'mock', upstream_model: 'mock' }],
});

let client: OpenAI;

beforeAll(async () => {
  client = new OpenAI({ baseURL: setup.gateway.baseUrl, apiKey: setup.gateway.key, maxRetries: 0 });
});

const model = 'gpt-3.5-turbo-instruct';

describe('openai npm SDK completions.create', () => {
  it('completes a prompt', async () => {
    const completion = await client.completions.create({ model, prompt: 'Say hello', max_tokens: 5 });
    expect(completion.object).toBe('text_completion');
    expect(completion.choices[0]?.text).toBe(' Echo: Say hello');
    expect(completion.choices[0]?.finish_reason).toBe('stop');
    expect(completion.usage?.total_tokens).toBe(5);
  });

  it('streams a completion with usage', async () => {
    const stream = await client.completions.create({
      model,
      prompt: 'Say hello',
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let finish: string | null | undefined;
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.text ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe(' Echo: Say hello');
    expect(finish).toBe('stop');
    expect(usage?.completion_tokens).toBe(3);
  });

  it('echoes the prompt with its logprobs, as evaluation harnesses ask (max_tokens 0)', async () => {
    const completion = await client.completions.create({
      model,
      prompt: 'The capital of France is Paris',
      echo: true,
      logprobs: 1,
      max_tokens: 0,
      temperature: 0,
    });
    const logprobs = completion.choices[0]?.logprobs;
    expect(completion.choices[0]?.text).toBe('The capital of France is Paris');
    expect(logprobs?.tokens).toEqual(mockTokens('The capital of France is Paris'));
    expect(logprobs?.token_logprobs).toEqual([null, ...[1, 2, 3, 4, 5].map(mockLogprob)]);
    expect(logprobs?.top_logprobs?.[1]).toEqual({ ' capital': mockLogprob(1) });
    expect(setup.mock.requests.at(-1)?.body).toMatchObject({ echo: true, logprobs: 1, max_tokens: 0 });
  });

  it('raises NotFoundError for a model it does not know', async () => {
    const error = await client.completions
      .create({ model: 'text-embedding-3-small', prompt: 'x' })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
  });
});
