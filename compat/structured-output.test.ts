import { createOpenAI } from '@ai-sdk/openai';
import { ChatOpenAI } from '@langchain/openai';
import { Agent, OpenAIProvider, Runner, setTracingDisabled } from '@openai/agents';
import { generateObject, streamObject } from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useGatewayWithMock } from '../test/support/gateway-fixture.js';
import { structuredAnswer } from '../test/support/mock-openai-upstream.js';

/**
 * Structured output (a JSON schema the answer must follow) through the helpers people use for it, each the real
 * library on both the Responses API and chat completions where it speaks both: the AI SDK's generateObject and
 * streamObject, LangChain's withStructuredOutput, the Agents SDK's outputType. The mock upstream's `structured`
 * scenario answers `{"city":"Paris","temperature":21}`; the npm and PyPI `openai` SDKs' parse helpers are in their
 * own files.
 */

const setup = useGatewayWithMock();
const Weather = z.object({ city: z.string(), temperature: z.number() });

function schemasSentUpstream() {
  return setup.mock.requests.map(
    (request) => (request.body.response_format as { json_schema?: { schema?: unknown } } | undefined)?.json_schema,
  );
}

describe('@ai-sdk/openai', () => {
  const provider = () => createOpenAI({ baseURL: setup.gateway.baseUrl, apiKey: setup.gateway.key });

  it.each([
    ['openai(model), the Responses API', () => provider()('structured')],
    ['openai.chat(model)', () => provider().chat('structured')],
  ])('generateObject and streamObject through %s', async (_name, model) => {
    const before = setup.mock.requests.length;
    const { object } = await generateObject({ model: model(), schema: Weather, prompt: 'Weather in Paris?' });
    expect(object).toEqual(structuredAnswer);
    const result = streamObject({ model: model(), schema: Weather, prompt: 'Weather in Paris?' });
    const partials: unknown[] = [];
    for await (const partial of result.partialObjectStream) partials.push(partial);
    expect(partials.length).toBeGreaterThan(1);
    expect(await result.object).toEqual(structuredAnswer);
    // Both calls reached the upstream with the schema, not as free text.
    const sent = schemasSentUpstream().slice(before);
    expect(sent).toHaveLength(2);
    for (const schema of sent)
      expect(schema?.schema).toMatchObject({ type: 'object', required: ['city', 'temperature'] });
  });
});

describe('@langchain/openai withStructuredOutput', () => {
  it.each([false, true])('useResponsesApi: %s', async (useResponsesApi) => {
    const chat = new ChatOpenAI({
      model: 'structured',
      apiKey: setup.gateway.key,
      configuration: { baseURL: setup.gateway.baseUrl },
      useResponsesApi,
    });
    expect(await chat.withStructuredOutput(Weather, { name: 'weather' }).invoke('Weather in Paris?')).toEqual(
      structuredAnswer,
    );
  });
});

describe('@openai/agents', () => {
  it('an agent with an outputType finishes with the parsed object', async () => {
    setTracingDisabled(true);
    const runner = new Runner({
      modelProvider: new OpenAIProvider({ baseURL: setup.gateway.baseUrl, apiKey: setup.gateway.key }),
    });
    const agent = new Agent({ name: 'weather', instructions: 'Answer.', model: 'structured', outputType: Weather });
    const result = await runner.run(agent, 'Weather in Paris?');
    expect(result.finalOutput).toEqual(structuredAnswer);
  });
});
