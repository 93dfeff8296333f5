import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accumulate, parseEvents } from './support/anthropic-events.js';
import { jsonOf, scenarioModelsFor, startTestGateway, type TestGateway, waitForLogRows } from './support/gateway.js';
import {
  type MockAnthropicUpstream,
  signThinking,
  startMockAnthropicUpstream,
  thinkingAnswer,
} from './support/mock-anthropic-upstream.js';
import { type MockGeminiUpstream, startMockGeminiUpstream } from './support/mock-gemini-upstream.js';
import { type MockUpstream, startMockUpstream } from './support/mock-openai-upstream.js';

/**
 * POST /v1/messages through the real gateway, for each kind of provider: Anthropic upstreams get the client's request
 * as it came (only the model mapped, the key replaced) and the answer back byte for byte; OpenAI-compatible and
 * Gemini upstreams get it translated to chat, and the answer comes back as an Anthropic message or event stream in
 * Anthropic's exact order. Usage and cost land in the log under the endpoint `messages`.
 */

const anthropicKey = 'sk-ant-provider-secret-0123456789';
let mock: MockUpstream;
let anthropic: MockAnthropicUpstream;
let gemini: MockGeminiUpstream;
let gateway: TestGateway;

beforeAll(async () => {
  [mock, anthropic, gemini] = await Promise.all([
    startMockUpstream(),
    startMockAnthropicUpstream({ apiKey: anthropicKey }),
    startMockGeminiUpstream(),
  ]);
  gateway = await startTestGateway({
    mock,
    providers: [
      {
        name: 'claude',
        type: 'anthropic',
        base_url: anthropic.baseUrl,
        api_key: anthropicKey,
        beta: ['operator-flag-2025-01-01'],
      },
      { name: 'google', type: 'gemini', base_url: gemini.baseUrl, api_key: 'gemini-test' },
    ],
    models: [
      ...scenarioModelsFor('claude', 'claude-', ['mock', 'tools', 'thinking']),
      ...scenarioModelsFor('google', 'gemini-', ['mock', 'tools', 'no-usage']),
    ],
  });
});

afterAll(async () => {
  await gateway.close();
  await Promise.all([mock.close(), anthropic.close(), gemini.close()]);
});

function postMessages(body: unknown, options: { path?: string; headers?: Record<string, string>; raw?: string } = {}) {
  return fetch(`${gateway.url}${options.path ?? '/v1/messages'}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${gateway.key}`,
      'content-type': 'application/json',
      'anthropic-version': '2023-06-01',
      ...options.headers,
    },
    body: options.raw ?? JSON.stringify(body),
  });
}

const hello = (model: string, extra: Record<string, unknown> = {}) => ({
  model,
  max_tokens: 100,
  messages: [{ role: 'user', content: 'Say hello' }],
  ...extra,
});

const weatherTool = {
  name: 'get_weather',
  description: 'The weather in a city',
  input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

describe('translated for an OpenAI-compatible upstream', () => {
  it('answers a message, sends a chat request upstream and logs the usage', async () => {
    const response = await postMessages(
      hello('gpt-4o-mini', { system: 'Be brief.', stop_sequences: ['END'], temperature: 0.5 }),
    );
    expect(response.status).toBe(200);
    const requestId = response.headers.get('x-request-id') as string;
    const message = await jsonOf(response);
    expect(message).toMatchObject({
      type: 'message',
      role: 'assistant',
      content: [{ type: 'text', text: 'Echo: Say hello' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    });
    expect(message.id).toMatch(/^msg_/);
    expect(message.usage.input_tokens).toBeGreaterThan(0);
    expect(message.usage.output_tokens).toBeGreaterThan(0);
    const upstream = mock.requests.at(-1);
    expect(upstream?.path).toBe('/v1/chat/completions');
    expect(upstream?.body).toMatchObject({
      model: 'mock',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Say hello' },
      ],
      max_completion_tokens: 100,
      stop: ['END'],
      temperature: 0.5,
    });
    const [row] = await waitForLogRows(gateway, [requestId]);
    expect(row).toMatchObject({ endpoint: 'messages', model: 'gpt-4o-mini', status: 200, stream: 0 });
    expect(row?.prompt_tokens).toBe(message.usage.input_tokens);
    expect(row?.completion_tokens).toBe(message.usage.output_tokens);
  });

  it('streams Anthropic’s events in order, with the real usage in message_delta', async () => {
    const response = await postMessages(hello('gpt-4o-mini', { stream: true }));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const events = parseEvents(await response.text());
    const message = accumulate(events);
    expect(message.content).toEqual([{ type: 'text', text: 'Echo: Say hello' }]);
    expect(message.stopReason).toBe('end_turn');
    expect(message.usage.output_tokens).toBeGreaterThan(0);
    expect(events.map((event) => event.event)).toEqual([
      'message_start',
      'content_block_start',
      ...events.slice(2, -3).map(() => 'content_block_delta'),
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    const requestId = response.headers.get('x-request-id') as string;
    const [row] = await waitForLogRows(gateway, [requestId]);
    expect(row).toMatchObject({ endpoint: 'messages', stream: 1, status: 200, usage_estimated: 0 });
    expect(row?.completion_tokens).toBe(message.usage.output_tokens);
  });

  it('round-trips a tool call: tool_use out, tool_result back in as a tool message', async () => {
    const first = await jsonOf(
      await postMessages(
        hello('tools', {
          messages: [{ role: 'user', content: 'Weather in Paris?' }],
          tools: [weatherTool],
          tool_choice: { type: 'auto' },
        }),
      ),
    );
    expect(first.stop_reason).toBe('tool_use');
    expect(mock.requests.at(-1)?.body.tool_choice).toBe('auto');
    const toolUse = first.content.find((block: { type: string }) => block.type === 'tool_use');
    expect(toolUse).toEqual({
      type: 'tool_use',
      id: 'call_mock_1',
      name: 'get_weather',
      input: { city: 'Paris', unit: 'celsius' },
    });
    const second = await postMessages(
      hello('tools', {
        tools: [weatherTool],
        messages: [
          { role: 'user', content: 'Weather in Paris?' },
          { role: 'assistant', content: first.content },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUse.id, content: '22 degrees' }] },
        ],
        stream: true,
      }),
    );
    const message = accumulate(parseEvents(await second.text()));
    expect(message.content).toEqual([{ type: 'text', text: 'The weather: 22 degrees' }]);
    expect(message.stopReason).toBe('end_turn');
    const upstream = mock.requests.at(-1)?.body;
    expect((upstream?.messages as unknown[] | undefined)?.slice(1)).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_mock_1',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city":"Paris","unit":"celsius"}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_mock_1', content: '22 degrees' },
    ]);
    expect(upstream?.tools).toEqual([
      {
        type: 'function',
        function: { name: 'get_weather', description: 'The weather in a city', parameters: weatherTool.input_schema },
      },
    ]);
  });

  it('streams a tool call as a tool_use block with its input in input_json_delta', async () => {
    const response = await postMessages(
      hello('tools', { messages: [{ role: 'user', content: 'Weather?' }], tools: [weatherTool], stream: true }),
    );
    const message = accumulate(parseEvents(await response.text()));
    expect(message.content).toEqual([
      { type: 'tool_use', id: 'call_mock_1', name: 'get_weather', input: { city: 'Paris', unit: 'celsius' } },
    ]);
    expect(message.stopReason).toBe('tool_use');
  });

  it.each([
    ['length', 'max_tokens'],
    ['content_filter', 'refusal'],
    ['stop', 'end_turn'],
  ])('maps finish_reason %s to stop_reason %s', async (finishReason, stopReason) => {
    const model = `finish-${finishReason}`;
    mock.on(model, (_request, response) => {
      const body = JSON.stringify({
        id: 'chatcmpl-x',
        object: 'chat.completion',
        created: 1,
        model,
        choices: [{ index: 0, message: { role: 'assistant', content: 'cut' }, finish_reason: finishReason }],
        usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
      });
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(body);
    });
    const local = await startTestGatewayFor(model);
    try {
      const response = await fetch(`${local.url}/v1/messages`, {
        method: 'POST',
        headers: { authorization: `Bearer ${local.key}`, 'content-type': 'application/json' },
        body: JSON.stringify(hello(model)),
      });
      const message = await jsonOf(response);
      expect(message.stop_reason).toBe(stopReason);
      expect(message.usage).toEqual({
        input_tokens: 3,
        output_tokens: 1,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
      });
    } finally {
      await local.close();
    }
  });

  it('names the stop sequence when the upstream says which one matched (vLLM)', async () => {
    mock.on('vllm-stop', (_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({
          id: 'chatcmpl-y',
          object: 'chat.completion',
          created: 1,
          model: 'vllm-stop',
          choices: [
            { index: 0, message: { role: 'assistant', content: 'one two' }, finish_reason: 'stop', stop_reason: 'END' },
          ],
          usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
        }),
      );
    });
    const local = await startTestGatewayFor('vllm-stop');
    try {
      const response = await fetch(`${local.url}/v1/messages`, {
        method: 'POST',
        headers: { authorization: `Bearer ${local.key}`, 'content-type': 'application/json' },
        body: JSON.stringify(hello('vllm-stop', { stop_sequences: ['END'] })),
      });
      expect(await jsonOf(response)).toMatchObject({ stop_reason: 'stop_sequence', stop_sequence: 'END' });
    } finally {
      await local.close();
    }
  });

  it('gives reasoning a thinking block of its own, and text after it a new text block', async () => {
    mock.on('reasoner', (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      const base = { id: 'chatcmpl-r', object: 'chat.completion.chunk', created: 1, model: 'reasoner' };
      const send = (delta: Record<string, unknown>, finish: string | null = null) =>
        response.write(
          `data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`,
        );
      send({ role: 'assistant', reasoning_content: 'Let me ' });
      send({ reasoning_content: 'think.' });
      send({ content: 'The answer ' });
      send({ content: 'is 4.' });
      send({}, 'stop');
      response.write(
        `data: ${JSON.stringify({ ...base, choices: [], usage: { prompt_tokens: 9, completion_tokens: 8, total_tokens: 17 } })}\n\n`,
      );
      response.end('data: [DONE]\n\n');
    });
    const local = await startTestGatewayFor('reasoner');
    try {
      const response = await fetch(`${local.url}/v1/messages`, {
        method: 'POST',
        headers: { authorization: `Bearer ${local.key}`, 'content-type': 'application/json' },
        body: JSON.stringify(hello('reasoner', { stream: true })),
      });
      // accumulate() fails on a delta of another kind than its block's.
      const message = accumulate(parseEvents(await response.text()));
      expect(message.content).toEqual([
        { type: 'thinking', thinking: 'Let me think.', signature: '' },
        { type: 'text', text: 'The answer is 4.' },
      ]);
      expect(message.usage).toMatchObject({ input_tokens: 9, output_tokens: 8 });
    } finally {
      await local.close();
    }
  });

  it('names the parameters a chat model does not take in x-switchboard-dropped-parameters', async () => {
    const response = await postMessages(
      hello('gpt-4o-mini', { thinking: { type: 'enabled', budget_tokens: 1024 }, top_k: 5 }),
    );
    expect(response.status).toBe(200);
    const dropped = response.headers.get('x-switchboard-dropped-parameters')?.split(', ') ?? [];
    expect(dropped).toEqual(expect.arrayContaining(['thinking', 'top_k']));
  });
});

async function startTestGatewayFor(model: string) {
  return startTestGateway({ mock, models: [{ name: model, provider: 'mock', upstream_model: model }] });
}

describe('translated for a Gemini upstream', () => {
  it('answers a message and a stream', async () => {
    const whole = await jsonOf(await postMessages(hello('gemini-mock')));
    expect(whole).toMatchObject({ content: [{ type: 'text', text: 'Echo: Say hello' }], stop_reason: 'end_turn' });
    const message = accumulate(parseEvents(await (await postMessages(hello('gemini-mock', { stream: true }))).text()));
    expect(message.content).toEqual([{ type: 'text', text: 'Echo: Say hello' }]);
    expect(gemini.requests.at(-1)?.path).toContain('gemini-mock'.replace('gemini-', ''));
  });

  it('leaves metadata.user_id out without naming it (Gemini has no end-user field)', async () => {
    const response = await postMessages(hello('gemini-mock', { metadata: { user_id: 'end-user-4711' } }));
    expect(response.status).toBe(200);
    expect(response.headers.get('x-switchboard-dropped-parameters')).toBeNull();
    expect(JSON.stringify(gemini.requests.at(-1)?.body)).not.toContain('end-user-4711');
  });

  it('sends top_k as topK and round-trips a tool call', async () => {
    const first = await jsonOf(
      await postMessages(
        hello('gemini-tools', { messages: [{ role: 'user', content: 'Weather?' }], tools: [weatherTool], top_k: 7 }),
      ),
    );
    expect(gemini.requests.at(-1)?.body.generationConfig).toMatchObject({ topK: 7 });
    expect(first.stop_reason).toBe('tool_use');
    const toolUse = first.content.find((block: { type: string }) => block.type === 'tool_use');
    const second = await jsonOf(
      await postMessages(
        hello('gemini-tools', {
          tools: [weatherTool],
          messages: [
            { role: 'user', content: 'Weather?' },
            { role: 'assistant', content: first.content },
            { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUse.id, content: 'sunny' }] },
          ],
        }),
      ),
    );
    expect(second.stop_reason).toBe('end_turn');
    expect(second.content[0].text).toContain('sunny');
  });

  it('estimates usage an upstream did not report, never 0, and marks the log row', async () => {
    const response = await postMessages(hello('gemini-no-usage'));
    const message = await jsonOf(response);
    expect(message.usage.input_tokens).toBeGreaterThan(0);
    expect(message.usage.output_tokens).toBeGreaterThan(0);
    const [row] = await waitForLogRows(gateway, [response.headers.get('x-request-id') as string]);
    expect(row?.usage_estimated).toBe(1);
  });
});

describe('passed through to an Anthropic upstream', () => {
  it('forwards the client’s bytes with only the model replaced, its protocol headers and the provider’s key', async () => {
    const raw =
      '{"max_tokens": 64,\n "model":"claude-mock", "messages":[{"role":"user","content":[{"type":"text","text":"caf\\u00e9","cache_control":{"type":"ephemeral"}}]}],"future_field":{"x":1}}';
    const response = await postMessages(undefined, {
      raw,
      path: '/v1/messages?beta=true',
      headers: {
        'anthropic-beta': 'claude-code-20250219,interleaved-thinking-2025-05-14',
        'x-api-key': 'sk-ant-client-key-must-not-pass',
        'x-claude-code-session-id': 'session-1',
      },
    });
    expect(response.status).toBe(200);
    const upstream = anthropic.requests.at(-1);
    expect(upstream?.path).toBe('/v1/messages?beta=true');
    expect(upstream?.raw?.toString()).toBe(raw.replace('"claude-mock"', '"mock"'));
    expect(upstream?.headers['anthropic-version']).toBe('2023-06-01');
    expect(upstream?.headers['anthropic-beta']).toBe(
      'claude-code-20250219,interleaved-thinking-2025-05-14,operator-flag-2025-01-01',
    );
    expect(upstream?.headers['x-api-key']).toBe(anthropicKey);
    expect(upstream?.headers.authorization).toBeUndefined();
    expect(upstream?.headers['x-claude-code-session-id']).toBeUndefined();
    expect(await jsonOf(response)).toMatchObject({
      id: 'msg_mock123',
      content: [{ type: 'text', text: 'Echo: café' }],
    });
  });

  it('answers thinking, redacted thinking, text and tool_use byte for byte, and logs cache usage and cost', async () => {
    const response = await postMessages(hello('claude-thinking'));
    expect(response.status).toBe(200);
    expect(Buffer.from(await response.arrayBuffer()).equals(thinkingAnswer.json)).toBe(true);
    const [row] = await waitForLogRows(gateway, [response.headers.get('x-request-id') as string]);
    expect(row).toMatchObject({
      endpoint: 'messages',
      prompt_tokens: 2095 + 1000 + 500,
      cached_tokens: 500,
      completion_tokens: 503,
      usage_estimated: 0,
    });
    expect(Number(row?.cost_usd)).toBeGreaterThan(0);
  });

  it('relays the stream event by event, byte for byte, and reads its usage on the way', async () => {
    const response = await postMessages(hello('claude-thinking', { stream: true }));
    expect(response.status).toBe(200);
    expect(Buffer.from(await response.arrayBuffer()).toString()).toBe(thinkingAnswer.sse.toString());
    const [row] = await waitForLogRows(gateway, [response.headers.get('x-request-id') as string]);
    expect(row).toMatchObject({ stream: 1, prompt_tokens: 2095 + 1000 + 500, cached_tokens: 500 });
    expect(row?.completion_tokens).toBe(503);
  });

  it('sends thinking blocks back with their signatures intact (the mock checks them)', async () => {
    const thinking = 'Step by step.';
    const response = await postMessages(
      hello('claude-tools', {
        max_tokens: 2048,
        tools: [weatherTool],
        thinking: { type: 'enabled', budget_tokens: 1024 },
        messages: [
          { role: 'user', content: 'Weather?' },
          {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking, signature: signThinking(thinking) },
              { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
            ],
          },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'rain' }] },
        ],
      }),
    );
    expect(response.status).toBe(200);
    expect((await jsonOf(response)).content[0].text).toBe('The weather: rain');
  });

  it('streams a tool round trip from Anthropic as Anthropic sent it', async () => {
    const response = await postMessages(
      hello('claude-tools', { messages: [{ role: 'user', content: 'Weather?' }], tools: [weatherTool], stream: true }),
    );
    const message = accumulate(parseEvents(await response.text()));
    expect(message.stopReason).toBe('tool_use');
    expect(message.content.at(-1)).toMatchObject({ type: 'tool_use', id: 'toolu_mock_1', name: 'get_weather' });
  });
});
