import OpenAI from 'openai';
import { beforeAll, describe, expect, it } from 'vitest';
import { useGatewayWithMock } from '../test/support/gateway-fixture.js';

/**
 * The official `openai` npm SDK asking a Claude model for extended thinking (`thinking`, Anthropic's own field, which
 * the gateway passes on) through a whole tool loop. Chat has no field for thinking's signature, so the turn that
 * answers the tool calls cannot bring the thinking back, which Anthropic requires with thinking on: that one turn is
 * sent without `thinking` (named in x-switchboard-dropped-parameters, refused where the model refuses what it cannot
 * take) instead of failing with Anthropic's 400.
 */

const setup = useGatewayWithMock({
  providerMocks: ['tools'],
  models: [
    {
      name: 'claude-tools-strict',
      provider: 'claude',
      upstream_model: 'tools',
      parameters: { on_unsupported: 'refuse' },
    },
  ],
});

let client: OpenAI;

beforeAll(() => {
  client = new OpenAI({ baseURL: setup.gateway.baseUrl, apiKey: setup.gateway.key, maxRetries: 0 });
});

const weatherTool = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};
const thinking = { type: 'enabled', budget_tokens: 1024 };

/** A tool loop's second request: the question, the model's call, the tool's answer. */
async function toolLoop(model: string, stream: boolean) {
  const question: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Paris?' }];
  // `thinking` is no field of the SDK's types: the SDK sends it as it is.
  const extra = { thinking } as Record<string, unknown>;
  const first = await client.chat.completions.create({ model, messages: question, tools: [weatherTool], ...extra });
  const upstreamFirst = setup.providerMocks.anthropic.requests.at(-1)?.body;
  expect(upstreamFirst?.thinking).toEqual(thinking);
  const call = first.choices[0]?.message.tool_calls?.[0] as OpenAI.ChatCompletionMessageToolCall;
  expect(call.type).toBe('function');
  const messages: OpenAI.ChatCompletionMessageParam[] = [
    ...question,
    first.choices[0]?.message as OpenAI.ChatCompletionMessageParam,
    { role: 'tool', tool_call_id: call.id, content: '18 C' },
  ];
  const request: OpenAI.ChatCompletionCreateParamsNonStreaming = { model, messages, tools: [weatherTool], ...extra };
  return stream
    ? client.chat.completions.stream({ ...request, stream: true }).finalChatCompletion()
    : client.chat.completions.create(request);
}

describe('openai npm SDK: a Claude tool loop with extended thinking', () => {
  it.each([false, true])('answers the tool results without thinking (stream: %s)', async (stream) => {
    const answer = await toolLoop('claude-tools', stream);
    expect(answer.choices[0]?.message.content).toContain('18 C');
    expect(setup.providerMocks.anthropic.requests.at(-1)?.body.thinking).toBeUndefined();
  });

  it('says that thinking was left out', async () => {
    const question: OpenAI.ChatCompletionMessageParam[] = [
      { role: 'user', content: 'Weather in Paris?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"P"}' } }],
      },
      { role: 'tool', tool_call_id: 'toolu_1', content: '18 C' },
    ];
    const body = { model: 'claude-tools', messages: question, tools: [weatherTool], thinking };
    const { response } = await client.chat.completions
      .create(body as OpenAI.ChatCompletionCreateParamsNonStreaming)
      .withResponse();
    expect(response.headers.get('x-switchboard-dropped-parameters')).toBe('thinking');
    const refused = await client.chat.completions
      .create({ ...body, model: 'claude-tools-strict' } as OpenAI.ChatCompletionCreateParamsNonStreaming)
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect((refused as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('thinking');
  });

  it('keeps thinking where no tool results are being answered', async () => {
    const { response } = await client.chat.completions
      .create({
        model: 'claude-tools',
        messages: [{ role: 'user', content: 'Hello' }],
        tools: [weatherTool],
        thinking,
      } as OpenAI.ChatCompletionCreateParamsNonStreaming)
      .withResponse();
    expect(response.headers.get('x-switchboard-dropped-parameters')).toBeNull();
    expect(setup.providerMocks.anthropic.requests.at(-1)?.body.thinking).toEqual(thinking);
  });
});
