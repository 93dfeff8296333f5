import OpenAI from 'openai';
import { zodResponseFormat } from 'openai/helpers/zod';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { waitForLogRows } from '../test/support/gateway.js';
import { useGatewayWithMock } from '../test/support/gateway-fixture.js';
import { structuredAnswer } from '../test/support/mock-openai-upstream.js';

/** The official `openai` npm SDK, pointed at Switchboard by its base URL only. */

const setup = useGatewayWithMock();

let client: OpenAI;

beforeAll(async () => {
  client = new OpenAI({ baseURL: setup.gateway.baseUrl, apiKey: setup.gateway.key, maxRetries: 0 });
});

const messages = [{ role: 'user' as const, content: 'Say hello' }];
const weatherTool = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'Weather for a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

describe('openai npm SDK', () => {
  it('creates a completion', async () => {
    const completion = await client.chat.completions.create({ model: 'gpt-4o-mini', messages });
    expect(completion.choices[0]?.message.content).toBe('Echo: Say hello');
    expect(completion.usage?.total_tokens).toBeGreaterThan(0);
    const { response, request_id } = await client.chat.completions
      .create({ model: 'gpt-4o-mini', messages })
      .withResponse();
    expect(request_id).toBe(response.headers.get('x-request-id'));
  });

  it('streams with usage', async () => {
    const stream = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    let finish: string | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe('Echo: Say hello');
    expect(finish).toBe('stop');
    expect(usage?.completion_tokens).toBeGreaterThan(0);
  });

  it('accumulates a streamed tool call with the stream helper', async () => {
    const stream = client.chat.completions.stream({ model: 'tools', messages, tools: [weatherTool] });
    const final = await stream.finalChatCompletion();
    const call = final.choices[0]?.message.tool_calls?.[0];
    expect(final.choices[0]?.message.role).toBe('assistant');
    expect(call?.id).toBe('call_mock_1');
    expect(call?.type).toBe('function');
    if (call?.type !== 'function') throw new Error('expected a function call');
    expect(call.function.name).toBe('get_weather');
    expect(JSON.parse(call.function.arguments)).toEqual({ city: 'Paris', unit: 'celsius' });
    expect(final.choices[0]?.finish_reason).toBe('tool_calls');
  });

  it('parses structured output with a zod response format, whole and through the stream helper', async () => {
    const responseFormat = zodResponseFormat(z.object({ city: z.string(), temperature: z.number() }), 'weather');
    const parsed = await client.chat.completions.parse({
      model: 'structured',
      messages,
      response_format: responseFormat,
    });
    expect(parsed.choices[0]?.message.parsed).toEqual(structuredAnswer);
    const stream = client.chat.completions.stream({ model: 'structured', messages, response_format: responseFormat });
    const final = await stream.finalChatCompletion();
    expect(final.choices[0]?.message.parsed).toEqual(structuredAnswer);
  });

  it('lists and retrieves models', async () => {
    const ids: string[] = [];
    for await (const model of client.models.list()) ids.push(model.id);
    expect(ids).toContain('gpt-4o-mini');
    expect((await client.models.retrieve('gpt-4o-mini')).id).toBe('gpt-4o-mini');
  });

  it('raises the right error classes with status, code, param and request id', async () => {
    const bad = new OpenAI({
      baseURL: setup.gateway.baseUrl,
      apiKey: 'sk-sb-not-a-real-key-000000000000',
      maxRetries: 0,
    });
    const auth = await bad.chat.completions.create({ model: 'mock', messages }).catch((error: unknown) => error);
    expect(auth).toBeInstanceOf(OpenAI.AuthenticationError);
    expect((auth as InstanceType<typeof OpenAI.AuthenticationError>).code).toBe('invalid_api_key');
    expect((auth as InstanceType<typeof OpenAI.AuthenticationError>).requestID).toMatch(/^req_/);

    const notFound = await client.chat.completions.create({ model: 'nope', messages }).catch((error: unknown) => error);
    expect(notFound).toBeInstanceOf(OpenAI.NotFoundError);
    expect((notFound as InstanceType<typeof OpenAI.NotFoundError>).code).toBe('model_not_found');

    const badRequest = await client.chat.completions
      .create({ model: 'mock', messages, temperature: 5 })
      .catch((error: unknown) => error);
    expect(badRequest).toBeInstanceOf(OpenAI.BadRequestError);
    expect((badRequest as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('temperature');

    const limited = await client.chat.completions
      .create({ model: 'error-429', messages })
      .catch((error: unknown) => error);
    expect(limited).toBeInstanceOf(OpenAI.RateLimitError);

    const upstream = await client.chat.completions
      .create({ model: 'error-500', messages })
      .catch((error: unknown) => error);
    expect(upstream).toBeInstanceOf(OpenAI.InternalServerError);
    expect((upstream as InstanceType<typeof OpenAI.InternalServerError>).status).toBe(502);
  });

  it('raises an APIError for a failure in the middle of a stream', async () => {
    const stream = await client.chat.completions.create({ model: 'midstream-reset', messages, stream: true });
    let text = '';
    const error = await (async () => {
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    })().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(text.length).toBeGreaterThan(0);
  });

  it('every SDK request lands in the request log', async () => {
    const { request_id } = await client.chat.completions.create({ model: 'gpt-4o-mini', messages }).withResponse();
    const [row] = await waitForLogRows(setup.gateway, [request_id as string]);
    expect(row?.user_agent).toContain('OpenAI/JS');
  });
});
