import { createOpenAI } from '@ai-sdk/openai';
import { generateText, stepCountIs, streamText, tool } from 'ai';
import { beforeAll, describe, expect, it } from 'vitest';
import { useGatewayWithMock } from '../test/support/gateway-fixture.js';
import { providerPrefixes, textModel } from '../test/support/provider-mocks.js';
import { weatherInput } from './support/weather-input.js';

/** Vercel's AI SDK (`openai.chat(...)`, /chat/completions) against every provider type behind the gateway. */

let openai: ReturnType<typeof createOpenAI>;

const setup = useGatewayWithMock({ providerMocks: true });

beforeAll(() => {
  openai = createOpenAI({ baseURL: setup.gateway.baseUrl, apiKey: setup.gateway.key });
});

describe.each(providerPrefixes.map((prefix) => ({ prefix, name: prefix || 'openai-' })))(
  '@ai-sdk/openai via $name models',
  ({ prefix }) => {
    it('generateText', async () => {
      const result = await generateText({ model: openai.chat(textModel(prefix)), prompt: 'Say hello', maxRetries: 0 });
      expect(result.text).toBe('Echo: Say hello');
      expect(result.finishReason).toBe('stop');
      expect(result.usage.inputTokens).toBeGreaterThan(0);
    });

    it('streamText with usage', async () => {
      const result = streamText({ model: openai.chat(textModel(prefix)), prompt: 'Say hello', maxRetries: 0 });
      let text = '';
      for await (const delta of result.textStream) text += delta;
      expect(text).toBe('Echo: Say hello');
      expect((await result.usage).outputTokens).toBeGreaterThan(0);
      expect(await result.finishReason).toBe('stop');
    });

    it('streamed tool calls arrive whole', async () => {
      const result = streamText({
        model: openai.chat(`${prefix}tools`),
        prompt: 'Weather in Paris?',
        tools: { get_weather: tool({ description: 'Weather for a city', inputSchema: weatherInput }) },
        maxRetries: 0,
      });
      const calls = await result.toolCalls;
      expect(calls).toHaveLength(1);
      expect(calls[0]?.toolName).toBe('get_weather');
      expect(calls[0]?.input).toEqual({ city: 'Paris', unit: 'celsius' });
      expect(await result.finishReason).toBe('tool-calls');
    });

    it('runs a multi-step tool loop (tool results go back through the gateway)', async () => {
      const cities: string[] = [];
      const result = await generateText({
        model: openai.chat(`${prefix}tools`),
        prompt: 'Weather in Paris?',
        tools: {
          get_weather: tool({
            description: 'Weather for a city',
            inputSchema: weatherInput,
            execute: async ({ city }) => {
              cities.push(city);
              return { temperature: 23 };
            },
          }),
        },
        stopWhen: stepCountIs(3),
        maxRetries: 0,
      });
      expect(cities).toEqual(['Paris']);
      expect(result.steps).toHaveLength(2);
      expect(result.text).toContain('The weather:');
      expect(result.text).toContain('23');
    });

    it('streams a multi-step tool loop', async () => {
      const result = streamText({
        model: openai.chat(`${prefix}tools`),
        prompt: 'Weather in Paris?',
        tools: {
          get_weather: tool({
            description: 'Weather for a city',
            inputSchema: weatherInput,
            execute: async () => ({ temperature: 17 }),
          }),
        },
        stopWhen: stepCountIs(3),
        maxRetries: 0,
      });
      let text = '';
      for await (const delta of result.textStream) text += delta;
      expect(text).toContain('17');
      expect((await result.steps).length).toBe(2);
    });
  },
);
