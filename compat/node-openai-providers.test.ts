import OpenAI from 'openai';
import { beforeAll, describe, expect, it } from 'vitest';
import { useGatewayWithMock } from '../test/support/gateway-fixture.js';
import { providerPrefixes, textModel } from '../test/support/provider-mocks.js';

/**
 * The official `openai` npm SDK against every provider type behind the gateway (OpenAI-compatible, Anthropic,
 * Gemini mock upstreams speaking their real wire formats): completions, streams with usage, streamed tool calls, and
 * whole tool loops, non-streaming and streaming (the SDK's runTools helper sends the tool results back).
 */

let client: OpenAI;

const setup = useGatewayWithMock({ providerMocks: true });

beforeAll(() => {
  client = new OpenAI({ baseURL: setup.gateway.baseUrl, apiKey: setup.gateway.key, maxRetries: 0 });
});

const messages = [{ role: 'user' as const, content: 'Say hello' }];
const weatherParameters = {
  type: 'object',
  properties: { city: { type: 'string' }, unit: { type: 'string' } },
  required: ['city'],
};
const weatherTool = {
  type: 'function' as const,
  function: { name: 'get_weather', description: 'Weather for a city', parameters: weatherParameters },
};

describe.each(providerPrefixes.map((prefix) => ({ prefix, name: prefix || 'openai-' })))(
  'openai npm SDK via $name models',
  ({ prefix }) => {
    it('creates a completion', async () => {
      const completion = await client.chat.completions.create({ model: textModel(prefix), messages });
      expect(completion.object).toBe('chat.completion');
      expect(completion.choices[0]?.message).toMatchObject({ role: 'assistant', content: 'Echo: Say hello' });
      expect(completion.choices[0]?.finish_reason).toBe('stop');
      expect(completion.usage?.total_tokens).toBeGreaterThan(0);
    });

    it('streams with usage', async () => {
      const stream = await client.chat.completions.create({
        model: textModel(prefix),
        messages,
        stream: true,
        stream_options: { include_usage: true },
      });
      let text = '';
      let finish: string | null | undefined;
      let usage: OpenAI.CompletionUsage | null | undefined;
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
      const stream = client.chat.completions.stream({
        model: `${prefix}tools`,
        messages: [{ role: 'user', content: 'Weather in Paris?' }],
        tools: [weatherTool],
      });
      const final = await stream.finalChatCompletion();
      const call = final.choices[0]?.message.tool_calls?.[0];
      expect(final.choices[0]?.message.role).toBe('assistant');
      expect(final.choices[0]?.finish_reason).toBe('tool_calls');
      if (call?.type !== 'function') throw new Error('expected a function call');
      expect(call.id).toEqual(expect.any(String));
      expect(call.function.name).toBe('get_weather');
      expect(JSON.parse(call.function.arguments)).toEqual({ city: 'Paris', unit: 'celsius' });
    });

    it('completes a tool round trip, sending the assistant message back as the SDK returned it', async () => {
      const conversation: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Paris?' }];
      const first = await client.chat.completions.create({
        model: `${prefix}tools`,
        messages: conversation,
        tools: [weatherTool],
      });
      const message = first.choices[0]?.message;
      const call = message?.tool_calls?.[0];
      if (!message || call?.type !== 'function') throw new Error('expected a tool call');
      conversation.push(message, { role: 'tool', tool_call_id: call.id, content: '{"temperature":21}' });
      const second = await client.chat.completions.create({
        model: `${prefix}tools`,
        messages: conversation,
        tools: [weatherTool],
      });
      expect(second.choices[0]?.message.content).toContain('The weather:');
      expect(second.choices[0]?.message.content).toContain('21');
    });

    it('runs a streaming tool loop with runTools', async () => {
      const cities: string[] = [];
      const runner = client.chat.completions.runTools({
        model: `${prefix}tools`,
        messages: [{ role: 'user', content: 'Weather in Paris?' }],
        stream: true,
        tools: [
          {
            type: 'function',
            function: {
              name: 'get_weather',
              description: 'Weather for a city',
              parameters: weatherParameters,
              parse: JSON.parse,
              function: (args: { city: string }) => {
                cities.push(args.city);
                return { temperature: 19 };
              },
            },
          },
        ],
      });
      const content = await runner.finalContent();
      expect(cities).toEqual(['Paris']);
      expect(content).toContain('The weather:');
      expect(content).toContain('19');
    });
  },
);
