import Anthropic from '@anthropic-ai/sdk';
import { beforeAll, describe, expect, it } from 'vitest';
import { waitForLogRows } from '../test/support/gateway.js';
import { useGatewayWithMock } from '../test/support/gateway-fixture.js';
import { thinkingAnswer } from '../test/support/mock-anthropic-upstream.js';
import { providerPrefixes, textModel } from '../test/support/provider-mocks.js';

/**
 * The official `@anthropic-ai/sdk` against the gateway's /v1/messages, for every provider type behind it (Anthropic
 * passed through; OpenAI-compatible and Gemini translated): messages.create, a stream read with finalMessage, a whole
 * tool round trip, countTokens; authenticated the way the docs tell Anthropic clients to (authToken, a Bearer).
 */

let client: Anthropic;

const setup = useGatewayWithMock({ providerMocks: ['mock', 'tools', 'thinking'] });

beforeAll(() => {
  // apiKey: null, so an ANTHROPIC_API_KEY in the environment cannot add an x-api-key.
  client = new Anthropic({ baseURL: setup.gateway.url, authToken: setup.gateway.key, apiKey: null, maxRetries: 0 });
});

const weatherTool: Anthropic.Tool = {
  name: 'get_weather',
  description: 'Weather for a city',
  input_schema: { type: 'object', properties: { city: { type: 'string' }, unit: { type: 'string' } } },
};

const toolsModel = (prefix: string) => (prefix === '' ? 'tools' : `${prefix}tools`);

describe.each(providerPrefixes.map((prefix) => ({ prefix, name: prefix || 'openai-' })))(
  '@anthropic-ai/sdk via $name models',
  ({ prefix }) => {
    it('creates a message', async () => {
      const message = await client.messages.create({
        model: textModel(prefix),
        max_tokens: 100,
        system: 'Be brief.',
        messages: [{ role: 'user', content: 'Say hello' }],
      });
      expect(message.type).toBe('message');
      expect(message.role).toBe('assistant');
      expect(message.content).toEqual([expect.objectContaining({ type: 'text', text: 'Echo: Say hello' })]);
      expect(message.stop_reason).toBe('end_turn');
      expect(message.usage.input_tokens).toBeGreaterThan(0);
      expect(message.usage.output_tokens).toBeGreaterThan(0);
    });

    it('streams, and finalMessage assembles the same answer', async () => {
      const stream = client.messages.stream({
        model: textModel(prefix),
        max_tokens: 100,
        messages: [{ role: 'user', content: 'Say hello' }],
      });
      let text = '';
      stream.on('text', (delta) => {
        text += delta;
      });
      const message = await stream.finalMessage();
      expect(text).toBe('Echo: Say hello');
      expect(message.content).toEqual([expect.objectContaining({ type: 'text', text: 'Echo: Say hello' })]);
      expect(message.stop_reason).toBe('end_turn');
      expect(message.usage.output_tokens).toBeGreaterThan(0);
    });

    it('runs a whole tool round trip', async () => {
      const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'What is the weather in Paris?' }];
      const first = await client.messages
        .stream({ model: toolsModel(prefix), max_tokens: 200, tools: [weatherTool], messages })
        .finalMessage();
      expect(first.stop_reason).toBe('tool_use');
      const toolUse = first.content.find((block): block is Anthropic.ToolUseBlock => block.type === 'tool_use');
      expect(toolUse).toMatchObject({ name: 'get_weather', input: { city: 'Paris' } });
      messages.push(
        { role: 'assistant', content: first.content },
        {
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: (toolUse as Anthropic.ToolUseBlock).id, content: '18 C' }],
        },
      );
      const second = await client.messages.create({
        model: toolsModel(prefix),
        max_tokens: 200,
        tools: [weatherTool],
        messages,
      });
      expect(second.stop_reason).toBe('end_turn');
      const text = second.content.find((block): block is Anthropic.TextBlock => block.type === 'text');
      expect(text?.text).toContain('18 C');
    });

    it('counts tokens, never 0', async () => {
      const counted = await client.messages.countTokens({
        model: textModel(prefix),
        system: 'Be brief.',
        messages: [{ role: 'user', content: 'How long is this prompt?' }],
        tools: [weatherTool],
      });
      expect(counted.input_tokens).toBeGreaterThan(0);
    });
  },
);

describe('@anthropic-ai/sdk against an Anthropic upstream', () => {
  it('keeps thinking blocks and their signatures through the beta client’s stream', async () => {
    const stream = client.beta.messages.stream(
      {
        model: 'claude-thinking',
        max_tokens: 2048,
        thinking: { type: 'enabled', budget_tokens: 1024 },
        messages: [{ role: 'user', content: 'Cafés near me?' }],
      },
      { headers: { 'anthropic-beta': 'interleaved-thinking-2025-05-14' } },
    );
    const message = await stream.finalMessage();
    const expected = JSON.parse(thinkingAnswer.json.toString());
    expect(message.content).toEqual(expected.content);
    expect(message.usage).toMatchObject({ cache_creation_input_tokens: 1000, cache_read_input_tokens: 500 });
    const upstream = setup.providerMocks.anthropic.requests.at(-1);
    // Older SDKs' beta client (and Claude Code) add ?beta=true, which is kept (test/messages.happy.test.ts).
    expect(upstream?.path.split('?')[0]).toBe('/v1/messages');
    expect(upstream?.headers['anthropic-beta']).toBe('interleaved-thinking-2025-05-14');
    expect(upstream?.headers.authorization).toBeUndefined();
  });

  it('reports a gateway error as the SDK’s typed error', async () => {
    const failure = await client.messages
      .create({ model: 'no-such-model', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Anthropic.NotFoundError);
    expect((failure as InstanceType<typeof Anthropic.NotFoundError>).error).toMatchObject({
      type: 'error',
      error: { type: 'not_found_error' },
    });
  });

  it('works with apiKey too (this SDK sends it as a Bearer), and never passes the key upstream', async () => {
    const withApiKey = new Anthropic({ baseURL: setup.gateway.url, apiKey: setup.gateway.key, maxRetries: 0 });
    const message = await withApiKey.messages.create({
      model: 'claude-mock',
      max_tokens: 10,
      messages: [{ role: 'user', content: 'x' }],
    });
    expect(message.content).toEqual([expect.objectContaining({ text: 'Echo: x' })]);
    const upstream = setup.providerMocks.anthropic.requests.at(-1);
    expect(JSON.stringify(upstream?.headers)).not.toContain(setup.gateway.key);
  });

  it('tells a client that sends only x-api-key (older SDKs, ANTHROPIC_API_KEY) to use a Bearer token', async () => {
    const withHeader = new Anthropic({
      baseURL: setup.gateway.url,
      apiKey: null,
      authToken: null,
      defaultHeaders: { 'x-api-key': setup.gateway.key },
      maxRetries: 0,
    });
    const failure = await withHeader.messages
      .create({ model: 'claude-mock', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Anthropic.AuthenticationError);
    const message = (failure as Error).message;
    expect(message).toContain('authToken');
    expect(message).not.toContain(setup.gateway.key);
  });

  it('logs each call with its endpoint', async () => {
    const { requestId } = await client.messages
      .create({ model: 'claude-mock', max_tokens: 10, messages: [{ role: 'user', content: 'x' }] })
      .withResponse()
      .then(({ response }) => ({ requestId: response.headers.get('x-request-id') as string }));
    const [row] = await waitForLogRows(setup.gateway, [requestId]);
    expect(row).toMatchObject({ endpoint: 'messages', model: 'claude-mock', status: 200 });
  });
});
