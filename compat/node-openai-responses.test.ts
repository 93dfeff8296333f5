import OpenAI from 'openai';
import { zodTextFormat } from 'openai/helpers/zod';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { waitForLogRows } from '../test/support/gateway.js';
import { useGatewayWithMock } from '../test/support/gateway-fixture.js';
import { structuredAnswer } from '../test/support/mock-openai-upstream.js';

/** The official `openai` npm SDK's Responses API (`client.responses.*`), against Switchboard translating to chat. */

const setup = useGatewayWithMock();

let client: OpenAI;

beforeAll(async () => {
  client = new OpenAI({ baseURL: setup.gateway.baseUrl, apiKey: setup.gateway.key, maxRetries: 0 });
});

const weatherTool = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'Weather for a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  strict: false,
};

describe('openai npm SDK, responses', () => {
  it('creates a response (output_text, usage, request id)', async () => {
    const { data: response, request_id } = await client.responses
      .create({ model: 'gpt-4o-mini', input: 'Say hello', instructions: 'Be brief.' })
      .withResponse();
    expect(response.output_text).toBe('Echo: Say hello');
    expect(response.status).toBe('completed');
    expect(response.usage?.total_tokens).toBeGreaterThan(0);
    const [row] = await waitForLogRows(setup.gateway, [request_id as string]);
    expect(row?.endpoint).toBe('responses');
  });

  it('streams events the SDK accumulates into the final response', async () => {
    const stream = client.responses.stream({ model: 'gpt-4o-mini', input: 'Say hello there' });
    let text = '';
    stream.on('response.output_text.delta', (event) => {
      text += event.delta;
    });
    const final = await stream.finalResponse();
    expect(text).toBe('Echo: Say hello there');
    expect(final.output_text).toBe('Echo: Say hello there');

    const raw = await client.responses.create({ model: 'gpt-4o-mini', input: 'counting', stream: true });
    const types: string[] = [];
    for await (const event of raw) types.push(event.type);
    expect(types[0]).toBe('response.created');
    expect(types.at(-1)).toBe('response.completed');
  });

  it('runs a tool round trip with function_call_output', async () => {
    const first = await client.responses.create({ model: 'tools', input: 'Weather in Paris?', tools: [weatherTool] });
    const call = first.output.find((item) => item.type === 'function_call');
    if (call?.type !== 'function_call') throw new Error('no function call');
    expect(call.name).toBe('get_weather');
    expect(JSON.parse(call.arguments)).toEqual({ city: 'Paris', unit: 'celsius' });
    // Stateless: the history sent back whole, as Codex and store: false clients do.
    const second = await client.responses.create({
      model: 'tools',
      store: false,
      tools: [weatherTool],
      input: [
        { role: 'user', content: 'Weather in Paris?' },
        call,
        { type: 'function_call_output', call_id: call.call_id, output: 'sunny' },
      ],
    });
    expect(second.output_text).toBe('The weather: sunny');
  });

  it('continues with previous_response_id, retrieves, lists input items, deletes', async () => {
    const first = await client.responses.create({ model: 'gpt-4o-mini', input: 'My name is Ada.' });
    const second = await client.responses.create({
      model: 'gpt-4o-mini',
      previous_response_id: first.id,
      input: 'What is my name?',
    });
    expect(second.previous_response_id).toBe(first.id);
    const retrieved = await client.responses.retrieve(second.id);
    expect(retrieved.output_text).toBe(second.output_text);
    const items = [];
    for await (const item of client.responses.inputItems.list(second.id, { order: 'asc', limit: 1 })) items.push(item);
    expect(items.map((item) => item.type)).toEqual(['message', 'message', 'message']);
    await client.responses.delete(second.id);
    await expect(client.responses.retrieve(second.id)).rejects.toMatchObject({ status: 404 });
  });

  it('parses structured output with a zod format, whole and through the stream helper', async () => {
    const Weather = z.object({ city: z.string(), temperature: z.number() });
    const format = zodTextFormat(Weather, 'weather');
    const parsed = await client.responses.parse({ model: 'structured', input: 'Weather in Paris?', text: { format } });
    expect(parsed.output_parsed).toEqual(structuredAnswer);
    // The schema reaches the chat upstream as response_format, strict as the SDK sent it.
    const upstream = setup.mock.requests.at(-1)?.body.response_format as { json_schema: Record<string, unknown> };
    expect(upstream.json_schema).toMatchObject({ name: 'weather', strict: true, schema: format.schema });

    const stream = client.responses.stream({ model: 'structured', input: 'Weather in Paris?', text: { format } });
    const deltas: string[] = [];
    stream.on('response.output_text.delta', (event) => deltas.push(event.delta));
    const final = await stream.finalResponse();
    expect(deltas.join('')).toBe(JSON.stringify(structuredAnswer));
    expect(final.output_parsed).toEqual(structuredAnswer);
  });
});
