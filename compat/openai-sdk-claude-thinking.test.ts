import OpenAI from 'openai';
import { beforeAll, describe, expect, it } from 'vitest';
import { useGatewayWithMock } from '../test/support/gateway-fixture.js';
import { joinThinkingBlocks } from '../test/support/thinking-blocks.js';

/**
 * The official `openai` npm SDK asking a Claude model for extended thinking (`thinking`, Anthropic's own field, which
 * the gateway passes on) through a whole tool loop. The answer carries Claude's signed thinking in `thinking_blocks`
 * (whole, or as stream fragments the client joins); the SDK sends the assistant message back as it got it, that field
 * included, and the gateway puts the blocks first in the Anthropic turn, so thinking stays on for the tool results.
 * The mock refuses, as Anthropic does, a tool loop with thinking on whose turn does not start with the signed thinking.
 * A client that does not bring the blocks back gets that one turn answered without `thinking` (named in
 * x-switchboard-dropped-parameters, refused where the model refuses what it cannot take) instead of Anthropic's 400.
 */

const setup = useGatewayWithMock({
  providerMocks: ['tools', 'thinking-tools'],
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

/** The content the mock answers a request with (its `thinking-tools` model is deterministic). */
async function upstreamAnswer(body: Record<string, unknown> | undefined): Promise<Array<Record<string, unknown>>> {
  const response = await fetch(`${setup.providerMocks.anthropic.baseUrl}/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'x-api-key': 'k' },
    body: JSON.stringify({ ...body, stream: false }),
  });
  return ((await response.json()) as { content: Array<Record<string, unknown>> }).content;
}

describe('openai npm SDK: a Claude tool loop with extended thinking', () => {
  it.each([false, true])(
    'answers tool results without thinking when the answer had none to bring back (stream: %s)',
    async (stream) => {
      const answer = await toolLoop('claude-tools', stream);
      expect(answer.choices[0]?.message.content).toContain('18 C');
      expect(setup.providerMocks.anthropic.requests.at(-1)?.body.thinking).toBeUndefined();
    },
  );

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

  it.each([false, true])('carries the signed thinking across the tool call (stream: %s)', async (stream) => {
    const model = 'claude-thinking-tools';
    const extra = { thinking } as Record<string, unknown>;
    const question: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Paris?' }];
    const request = { model, messages: question, tools: [weatherTool], ...extra };
    let assistant: OpenAI.ChatCompletionMessageParam;
    if (stream) {
      // The SDK's own accumulation (finalChatCompletion) keeps only the last fragment of a field it does not know, so
      // the client joins thinking_blocks from the chunks, as LiteLLM's stream builder does.
      const deltas: Array<Record<string, unknown>> = [];
      const runner = client.chat.completions.stream({
        ...request,
        stream: true,
      } as OpenAI.ChatCompletionCreateParamsStreaming);
      runner.on('chunk', (chunk) => {
        for (const choice of chunk.choices) deltas.push(choice.delta as Record<string, unknown>);
      });
      const final = await runner.finalChatCompletion();
      assistant = {
        ...(final.choices[0]?.message as OpenAI.ChatCompletionAssistantMessageParam),
        thinking_blocks: joinThinkingBlocks(deltas),
      } as OpenAI.ChatCompletionAssistantMessageParam;
    } else {
      const first = await client.chat.completions.create(request as OpenAI.ChatCompletionCreateParamsNonStreaming);
      assistant = first.choices[0]?.message as OpenAI.ChatCompletionMessageParam;
    }
    // What Anthropic answered, as the client must give it back: signed thinking and redacted thinking.
    const answered = await upstreamAnswer(setup.providerMocks.anthropic.requests.at(-1)?.body);
    const blocks = (assistant as unknown as { thinking_blocks: unknown }).thinking_blocks;
    expect(blocks).toEqual(answered.slice(0, 2));
    const call = (assistant as OpenAI.ChatCompletionAssistantMessageParam).tool_calls?.[0];
    const messages: OpenAI.ChatCompletionMessageParam[] = [
      ...question,
      assistant,
      { role: 'tool', tool_call_id: String(call?.id), content: '18 C' },
    ];
    const { data: answer, response } = await client.chat.completions
      .create({ ...request, messages } as OpenAI.ChatCompletionCreateParamsNonStreaming)
      .withResponse();
    expect(answer.choices[0]?.message.content).toBe('The weather: 18 C');
    expect(response.headers.get('x-switchboard-dropped-parameters')).toBeNull();
    const upstream = setup.providerMocks.anthropic.requests.at(-1);
    expect(upstream?.body.thinking).toEqual(thinking);
    expect(upstream?.body.messages[1].content.map((block: { type: string }) => block.type)).toEqual([
      'thinking',
      'redacted_thinking',
      'text',
      'tool_use',
    ]);
    // The blocks went back as Anthropic wrote them, up to the escapes of their JSON.
    expect(upstream?.raw?.toString('utf8')).toContain(JSON.stringify(answered[0]));
  });

  it.each(['claude-tools', 'claude-tools-strict'])(
    'refuses a malformed block with a 400 naming it (%s)',
    async (model) => {
      const messages = [
        { role: 'user', content: 'Weather in Paris?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"P"}' } },
          ],
          thinking_blocks: [{ type: 'thinking', thinking: 'hmm', signature: 42 }],
        },
        { role: 'tool', tool_call_id: 'toolu_1', content: '18 C' },
      ];
      const requests = setup.providerMocks.anthropic.requests.length;
      const refused = await client.chat.completions
        .create({ model, messages, tools: [weatherTool], thinking } as OpenAI.ChatCompletionCreateParamsNonStreaming)
        .catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
      const error = refused as InstanceType<typeof OpenAI.BadRequestError>;
      expect(error.param).toBe('messages[1].thinking_blocks[0].signature');
      expect(error.code).toBe('invalid_type');
      expect(setup.providerMocks.anthropic.requests.length).toBe(requests);
    },
  );

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
