import { createOpenAI } from '@ai-sdk/openai';
import { generateText, streamText, tool } from 'ai';
import { beforeAll, describe, expect, it } from 'vitest';
import { useGatewayWithMock } from '../test/support/gateway-fixture.js';
import { weatherInput } from './support/weather-input.js';

/** Vercel's AI SDK through `@ai-sdk/openai`'s chat model (`openai.chat(...)` uses /chat/completions). */

const setup = useGatewayWithMock();

let openai: ReturnType<typeof createOpenAI>;

beforeAll(async () => {
  openai = createOpenAI({ baseURL: setup.gateway.baseUrl, apiKey: setup.gateway.key });
});

const weather = tool({
  description: 'Weather for a city',
  inputSchema: weatherInput,
});

describe('@ai-sdk/openai', () => {
  it('generateText', async () => {
    const result = await generateText({ model: openai.chat('gpt-4o-mini'), prompt: 'Say hello', maxRetries: 0 });
    expect(result.text).toBe('Echo: Say hello');
    expect(result.finishReason).toBe('stop');
    expect(result.usage.outputTokens).toBeGreaterThan(0);
  });

  it('streamText with usage (the SDK always asks for include_usage)', async () => {
    const result = streamText({ model: openai.chat('gpt-4o-mini'), prompt: 'Say hello', maxRetries: 0 });
    let text = '';
    for await (const delta of result.textStream) text += delta;
    expect(text).toBe('Echo: Say hello');
    expect((await result.usage).outputTokens).toBeGreaterThan(0);
    expect(await result.finishReason).toBe('stop');
  });

  it('streamed tool calls arrive whole', async () => {
    const result = streamText({
      model: openai.chat('tools'),
      prompt: 'Weather in Paris?',
      tools: { get_weather: weather },
      maxRetries: 0,
    });
    const calls = await result.toolCalls;
    expect(calls).toHaveLength(1);
    expect(calls[0]?.toolName).toBe('get_weather');
    expect(calls[0]?.input).toEqual({ city: 'Paris', unit: 'celsius' });
    expect(await result.finishReason).toBe('tool-calls');
  });

  it('non-streamed tool calls', async () => {
    const result = await generateText({
      model: openai.chat('tools'),
      prompt: 'Weather?',
      tools: { get_weather: weather },
      maxRetries: 0,
    });
    expect(result.toolCalls[0]?.input).toEqual({ city: 'Paris', unit: 'celsius' });
  });

  it('surfaces gateway errors as API call errors', async () => {
    const failure = await generateText({ model: openai.chat('nope'), prompt: 'x', maxRetries: 0 }).catch(
      (error: unknown) => error,
    );
    expect(String((failure as Error).message)).toContain('does not exist');
    expect((failure as { statusCode?: number }).statusCode).toBe(404);
  });
});
