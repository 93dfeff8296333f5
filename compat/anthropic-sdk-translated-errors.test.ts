import Anthropic from '@anthropic-ai/sdk';
import { beforeAll, describe, expect, it } from 'vitest';
import { useGatewayWithMock } from '../test/support/gateway-fixture.js';
import { sendJson } from '../test/support/mock-server.js';

/**
 * What a non-Anthropic deployment refuses in a translated /v1/messages request, as the official `@anthropic-ai/sdk`
 * sees it: the field named as the client wrote it (`tools.0.input_schema`, `stop_sequences`), never as the chat
 * request the gateway sent (`tools[0].function.parameters`, `stop`). Anthropic's error body has no `param`: the path
 * leads the message, as Anthropic's own errors put it.
 */

/** OpenAI's own refusal of a tool schema its strict mode cannot take (a real answer's shape). */
const schemaRefusal = {
  error: {
    message:
      "Invalid schema for function 'get_weather': In context=(), 'additionalProperties' is required to be supplied and to be false.",
    type: 'invalid_request_error',
    param: 'tools[0].function.parameters',
    code: 'invalid_function_parameters',
  },
};

const setup = useGatewayWithMock({
  providerMocks: ['mock'],
  upstreamHandlers: {
    'refuses-schema': (_request, response) => sendJson(response, 400, schemaRefusal),
  },
  models: [
    { name: 'refuses-schema', provider: 'mock', upstream_model: 'refuses-schema' },
    { name: 'gemini-strict', provider: 'google', upstream_model: 'mock', parameters: { on_unsupported: 'refuse' } },
    {
      name: 'no-stop-or-user',
      provider: 'mock',
      upstream_model: 'mock',
      parameters: { unsupported: ['stop', 'user'], on_unsupported: 'refuse' },
    },
  ],
});

let client: Anthropic;

beforeAll(() => {
  client = new Anthropic({ baseURL: setup.gateway.url, authToken: setup.gateway.key, apiKey: null, maxRetries: 0 });
});

const weatherTool: Anthropic.Tool = {
  name: 'get_weather',
  description: 'Weather for a city',
  input_schema: { type: 'object', properties: { city: { type: 'string' } } },
};

const question: Anthropic.MessageParam[] = [{ role: 'user', content: 'Weather in Paris?' }];

async function refusal(request: Promise<unknown>): Promise<string> {
  const failure = await request.catch((error: unknown) => error);
  expect(failure).toBeInstanceOf(Anthropic.BadRequestError);
  const body = (failure as InstanceType<typeof Anthropic.BadRequestError>).error as {
    type: string;
    error: { type: string; message: string };
  };
  expect(body.type).toBe('error');
  expect(body.error.type).toBe('invalid_request_error');
  return body.error.message;
}

describe('a translated /v1/messages request refused for one of its fields, through @anthropic-ai/sdk', () => {
  it.each([false, true])('names a tool’s schema as the tool’s input_schema (stream: %s)', async (stream) => {
    const message = await refusal(
      client.messages.create({
        model: 'refuses-schema',
        max_tokens: 50,
        tools: [weatherTool],
        messages: question,
        stream,
      }) as Promise<unknown>,
    );
    expect(message).toBe(
      "tools.0.input_schema: Invalid schema for function 'get_weather': In context=(), 'additionalProperties' is required to be supplied and to be false.",
    );
    expect(message).not.toContain('function.parameters');
  });

  it('names disable_parallel_tool_use, not parallel_tool_calls, when the model refuses it', async () => {
    const message = await refusal(
      client.messages.create({
        model: 'gemini-strict',
        max_tokens: 50,
        tools: [weatherTool],
        tool_choice: { type: 'auto', disable_parallel_tool_use: true },
        messages: question,
      }),
    );
    expect(message).toBe(
      "tool_choice.disable_parallel_tool_use: Unsupported parameter: 'tool_choice.disable_parallel_tool_use' is not supported with this model (gemini-strict).",
    );
  });

  it('names stop_sequences and metadata.user_id, not stop and user', async () => {
    const stop = await refusal(
      client.messages.create({
        model: 'no-stop-or-user',
        max_tokens: 50,
        stop_sequences: ['END'],
        messages: question,
      }),
    );
    expect(stop).toBe(
      "stop_sequences: Unsupported parameter: 'stop_sequences' is not supported with this model (no-stop-or-user).",
    );
    const user = await refusal(
      client.messages.create({
        model: 'no-stop-or-user',
        max_tokens: 50,
        metadata: { user_id: 'user-42' },
        messages: question,
      }),
    );
    expect(user).toBe(
      "metadata.user_id: Unsupported parameter: 'metadata.user_id' is not supported with this model (no-stop-or-user).",
    );
  });

  it('names a dropped parameter by the client’s field in x-switchboard-dropped-parameters', async () => {
    const { data, response } = await client.messages
      .create({
        model: 'gemini-mock',
        max_tokens: 50,
        tools: [weatherTool],
        tool_choice: { type: 'any', disable_parallel_tool_use: true },
        messages: question,
      })
      .withResponse();
    expect(data.type).toBe('message');
    expect(response.headers.get('x-switchboard-dropped-parameters')).toBe('tool_choice.disable_parallel_tool_use');
  });
});
