import { createOpenAI } from '@ai-sdk/openai';
import { ChatOpenAI } from '@langchain/openai';
import { Agent, tool as agentTool, OpenAIProvider, Runner, setTracingDisabled } from '@openai/agents';
import { generateText, stepCountIs, streamText, tool } from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useGatewayWithMock } from '../test/support/gateway-fixture.js';
import { weatherInput } from './support/weather-input.js';

/**
 * The clients that speak the Responses API by default, each the real library pointed at Switchboard by base URL:
 * the AI SDK's `openai('model')`, the OpenAI Agents SDK (an agent calling a function tool to completion) and
 * LangChain's ChatOpenAI with `useResponsesApi: true`. The mock upstream speaks chat completions.
 */

const setup = useGatewayWithMock();

function upstreamChatRequests() {
  return setup.mock.requests.filter((request) => request.path === '/v1/chat/completions');
}

describe('@ai-sdk/openai openai(model) (the Responses API)', () => {
  const provider = () => createOpenAI({ baseURL: setup.gateway.baseUrl, apiKey: setup.gateway.key });
  const weather = tool({
    description: 'Weather for a city',
    inputSchema: weatherInput,
    execute: async ({ city }) => `sunny in ${city}`,
  });

  it('generateText', async () => {
    const result = await generateText({ model: provider()('gpt-4o-mini'), prompt: 'Say hello', maxRetries: 0 });
    expect(result.text).toBe('Echo: Say hello');
    expect(result.finishReason).toBe('stop');
    expect(result.usage.outputTokens).toBeGreaterThan(0);
    expect(result.response.id).toMatch(/^resp_/);
  });

  it('streamText', async () => {
    const result = streamText({ model: provider()('gpt-4o-mini'), prompt: 'Say hello', maxRetries: 0 });
    let text = '';
    for await (const delta of result.textStream) text += delta;
    expect(text).toBe('Echo: Say hello');
    expect((await result.usage).outputTokens).toBeGreaterThan(0);
  });

  it('a tool, run and answered', async () => {
    const result = await generateText({
      model: provider()('tools'),
      prompt: 'Weather in Paris?',
      tools: { get_weather: weather },
      stopWhen: stepCountIs(3),
      maxRetries: 0,
    });
    expect(result.steps[0]?.toolCalls[0]?.toolName).toBe('get_weather');
    expect(result.text).toBe('The weather: sunny in Paris');
  });
});

describe('@openai/agents', () => {
  it('runs an agent that calls a function tool to its final output', async () => {
    setTracingDisabled(true);
    const runner = new Runner({
      modelProvider: new OpenAIProvider({
        baseURL: setup.gateway.baseUrl,
        apiKey: setup.gateway.key,
        useResponses: true,
      }),
    });
    const getWeather = agentTool({
      name: 'get_weather',
      description: 'Weather for a city',
      parameters: z.object({ city: z.string(), unit: z.string() }),
      execute: async ({ city }) => `cloudy in ${city}`,
    });
    const agent = new Agent({
      name: 'Forecaster',
      instructions: 'Answer about weather.',
      model: 'tools',
      tools: [getWeather],
    });
    const before = upstreamChatRequests().length;
    const result = await runner.run(agent, 'Weather in Paris?');
    expect(result.finalOutput).toBe('The weather: cloudy in Paris');
    // Two turns: the tool call, then the answer from its output.
    expect(upstreamChatRequests().length - before).toBe(2);
  });
});

describe('@langchain/openai with useResponsesApi', () => {
  const chat = () =>
    new ChatOpenAI({
      model: 'gpt-4o-mini',
      apiKey: setup.gateway.key,
      useResponsesApi: true,
      maxRetries: 0,
      configuration: { baseURL: setup.gateway.baseUrl },
    });

  it('invoke', async () => {
    const message = await chat().invoke('Say hello');
    expect(message.text).toBe('Echo: Say hello');
    expect(message.usage_metadata?.total_tokens).toBeGreaterThan(0);
  });

  it('stream', async () => {
    let text = '';
    for await (const chunk of await chat().stream('Say hello')) text += chunk.text;
    expect(text).toBe('Echo: Say hello');
  });
});
