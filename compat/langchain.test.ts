import { ChatOpenAI } from '@langchain/openai';
import { describe, expect, it } from 'vitest';
import { useGatewayWithMock } from '../test/support/gateway-fixture.js';

/** LangChain's ChatOpenAI (built on the openai npm SDK), configured with Switchboard's base URL. */

const setup = useGatewayWithMock();

function chat(model: string) {
  return new ChatOpenAI({
    model,
    apiKey: setup.gateway.key,
    configuration: { baseURL: setup.gateway.baseUrl },
    maxRetries: 0,
  });
}

describe('@langchain/openai ChatOpenAI', () => {
  it('invoke', async () => {
    const message = await chat('gpt-4o-mini').invoke('Say hello');
    expect(message.content).toBe('Echo: Say hello');
    expect(message.usage_metadata?.total_tokens).toBeGreaterThan(0);
  });

  it('stream with usage metadata', async () => {
    let text = '';
    let outputTokens = 0;
    for await (const chunk of await chat('gpt-4o-mini').stream('Say hello')) {
      text += typeof chunk.content === 'string' ? chunk.content : '';
      outputTokens += chunk.usage_metadata?.output_tokens ?? 0;
    }
    expect(text).toBe('Echo: Say hello');
    expect(outputTokens).toBeGreaterThan(0);
  });

  it('tool calls', async () => {
    const model = chat('tools').bindTools([
      {
        type: 'function',
        function: {
          name: 'get_weather',
          description: 'Weather',
          parameters: { type: 'object', properties: { city: { type: 'string' } } },
        },
      },
    ]);
    const message = await model.invoke('Weather in Paris?');
    expect(message.tool_calls?.[0]).toMatchObject({ name: 'get_weather', args: { city: 'Paris', unit: 'celsius' } });
  });
});
