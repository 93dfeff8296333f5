import Anthropic from '@anthropic-ai/sdk';
import { beforeAll, describe, expect, it } from 'vitest';
import { useGatewayWithMock } from '../test/support/gateway-fixture.js';
import { sendJson } from '../test/support/mock-server.js';

/**
 * A conversation that moves from a translated model to an Anthropic one (a fallback, or a model served by both kinds
 * of deployment), through the official `@anthropic-ai/sdk`: the translated model's reasoning came back as a thinking
 * block without a signature, which Anthropic refuses ("Invalid `signature` in `thinking` block"), so the conversation
 * would be refused by every Anthropic deployment from then on. Such blocks are left out of what goes to Anthropic;
 * signed ones still go byte for byte.
 */

const weatherTool: Anthropic.Tool = {
  name: 'get_weather',
  input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

const setup = useGatewayWithMock({
  providerMocks: ['mock', 'tools'],
  upstreamHandlers: {
    // An OpenAI-compatible reasoning model: its thinking, then a tool call when tools are offered, else text.
    'reasoner-tools': (request, response) =>
      sendJson(response, 200, {
        id: 'chatcmpl-r',
        object: 'chat.completion',
        created: 1,
        model: 'reasoner-tools',
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              reasoning_content: 'The user wants the weather.',
              content: request.body.tools ? null : 'Hello.',
              ...(request.body.tools
                ? {
                    tool_calls: [
                      {
                        id: 'call_1',
                        type: 'function',
                        function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
                      },
                    ],
                  }
                : {}),
            },
            finish_reason: request.body.tools ? 'tool_calls' : 'stop',
          },
        ],
        usage: { prompt_tokens: 5, completion_tokens: 5, total_tokens: 10 },
      }),
  },
  models: [{ name: 'reasoner-tools', provider: 'mock', upstream_model: 'reasoner-tools' }],
});

let client: Anthropic;

beforeAll(() => {
  client = new Anthropic({ baseURL: setup.gateway.url, authToken: setup.gateway.key, apiKey: null, maxRetries: 0 });
});

const upstream = () => setup.providerMocks.anthropic.requests.at(-1)?.body;

describe('a translated model’s unsigned thinking, sent on to an Anthropic model', () => {
  it('is left out, so Anthropic takes the conversation', async () => {
    const question: Anthropic.MessageParam = { role: 'user', content: 'Hi' };
    const first = await client.messages.create({ model: 'reasoner-tools', max_tokens: 50, messages: [question] });
    expect(first.content[0]).toEqual({ type: 'thinking', thinking: 'The user wants the weather.', signature: '' });
    const messages: Anthropic.MessageParam[] = [
      question,
      { role: 'assistant', content: first.content },
      { role: 'user', content: 'And now?' },
    ];
    const second = await client.messages.create({ model: 'claude-mock', max_tokens: 50, messages });
    expect(second.content).toEqual([expect.objectContaining({ type: 'text', text: 'Echo: And now?' })]);
    expect(upstream()?.messages[1].content).toEqual([{ type: 'text', text: 'Hello.' }]);
    const counted = await client.messages.countTokens({ model: 'claude-mock', messages });
    expect(counted.input_tokens).toBeGreaterThan(0);
  });

  it.each([false, true])(
    'answers a tool loop the translated model began, without thinking that could not verify (stream: %s)',
    async (stream) => {
      const question: Anthropic.MessageParam = { role: 'user', content: 'Weather in Paris?' };
      const first = await client.messages.create({
        model: 'reasoner-tools',
        max_tokens: 50,
        tools: [weatherTool],
        messages: [question],
      });
      const call = first.content.find((block): block is Anthropic.ToolUseBlock => block.type === 'tool_use');
      expect(first.content[0]?.type).toBe('thinking');
      const request = {
        model: 'claude-tools',
        max_tokens: 2048,
        thinking: { type: 'enabled' as const, budget_tokens: 1024 },
        tools: [weatherTool],
        messages: [
          question,
          { role: 'assistant' as const, content: first.content },
          {
            role: 'user' as const,
            content: [
              { type: 'tool_result' as const, tool_use_id: (call as Anthropic.ToolUseBlock).id, content: '18 C' },
            ],
          },
        ],
      };
      const { data, response } = stream
        ? await client.messages
            .stream(request)
            .withResponse()
            .then(async ({ data: messageStream, response }) => ({ data: await messageStream.finalMessage(), response }))
        : await client.messages.create(request).withResponse();
      expect(data.content).toEqual([expect.objectContaining({ type: 'text', text: expect.stringContaining('18 C') })]);
      // Anthropic would refuse thinking on while the turn whose calls are answered lacks its thinking.
      expect(upstream()?.thinking).toBeUndefined();
      expect(upstream()?.messages[1].content.map((block: { type: string }) => block.type)).toEqual(['tool_use']);
      expect(response.headers.get('x-switchboard-dropped-parameters')).toBe('thinking');
    },
  );
});
