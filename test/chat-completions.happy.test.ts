import { describe, expect, it } from 'vitest';
import { chatBody, jsonOf, postChat, upstreamSecret, waitForLogRows } from './support/gateway.js';
import { useGatewayWithMock } from './support/gateway-fixture.js';
import { readSse } from './support/sse.js';

const setup = useGatewayWithMock();

function lastUpstreamRequest() {
  const request = setup.mock.requests.at(-1);
  if (!request) throw new Error('the mock received nothing');
  return request;
}

describe('POST /v1/chat/completions, non-streaming', () => {
  it('answers in the OpenAI shape with JSON content type and a request id', async () => {
    const response = await postChat(setup.gateway, chatBody('gpt-4o-mini'));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(response.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]{32}$/);
    const body = await jsonOf(response);
    expect(body.object).toBe('chat.completion');
    expect(body.choices[0].message).toEqual({
      role: 'assistant',
      content: 'Echo: Say hello',
      refusal: null,
      annotations: [],
    });
    expect(body.choices[0].finish_reason).toBe('stop');
    expect(body.usage.total_tokens).toBeGreaterThan(0);
  });

  it('sends upstream the upstream model name, the provider key, and nothing of the client', async () => {
    await postChat(setup.gateway, chatBody('gpt-4o-mini', { temperature: 0.3, custom_field: { kept: true } }), {
      'openai-organization': 'org-client',
      'x-api-key': 'client-secret-header',
    });
    const upstream = lastUpstreamRequest();
    expect(upstream.path).toBe('/v1/chat/completions');
    expect(upstream.body.model).toBe('mock');
    expect(upstream.body.temperature).toBe(0.3);
    expect(upstream.body.custom_field).toEqual({ kept: true });
    expect(upstream.headers.authorization).toBe(`Bearer ${upstreamSecret}`);
    expect(JSON.stringify(upstream.headers)).not.toContain(setup.gateway.key);
    expect(upstream.headers['openai-organization']).toBeUndefined();
    expect(upstream.headers['x-api-key']).toBeUndefined();
  });

  it('logs the request with tokens, cost, provider and latency', async () => {
    const response = await postChat(setup.gateway, chatBody('gpt-4o-mini'));
    const requestId = response.headers.get('x-request-id') as string;
    const body = await jsonOf(response);
    const [row] = await waitForLogRows(setup.gateway, [requestId]);
    expect(row).toMatchObject({
      request_id: requestId,
      key_id: setup.gateway.keyId,
      key_name: 'test-app',
      model: 'gpt-4o-mini',
      provider: 'mock',
      upstream_model: 'mock',
      status: 200,
      outcome: 'success',
      stream: 0,
      prompt_tokens: body.usage.prompt_tokens,
      completion_tokens: body.usage.completion_tokens,
      usage_estimated: 0,
    });
    const expectedCost = (body.usage.prompt_tokens * 0.15 + body.usage.completion_tokens * 0.6) / 1e6;
    expect(row?.cost_usd).toBeCloseTo(expectedCost, 12);
    expect(row?.latency_ms).toBeGreaterThanOrEqual(0);
  });

  it('returns tool calls untouched', async () => {
    const response = await postChat(setup.gateway, chatBody('tools'));
    const body = await jsonOf(response);
    expect(body.choices[0].finish_reason).toBe('tool_calls');
    expect(body.choices[0].message.tool_calls[0]).toEqual({
      id: 'call_mock_1',
      type: 'function',
      function: { name: 'get_weather', arguments: '{"city":"Paris","unit":"celsius"}' },
    });
  });

  it('estimates usage when the upstream reports none, marks it, and gives the client the estimate', async () => {
    const response = await postChat(setup.gateway, chatBody('no-usage'));
    const body = await jsonOf(response);
    expect(body.usage.prompt_tokens).toBeGreaterThan(0);
    expect(body.usage.completion_tokens).toBeGreaterThan(0);
    const [row] = await waitForLogRows(setup.gateway, [response.headers.get('x-request-id') as string]);
    expect(row?.usage_estimated).toBe(1);
    expect(row?.prompt_tokens).toBeGreaterThan(0);
    expect(row?.cost_usd).toBeGreaterThan(0);
  });
});

describe('POST /v1/chat/completions, streaming', () => {
  it('streams data-only SSE: role first, finish chunk, no usage unless asked, [DONE]', async () => {
    const response = await postChat(setup.gateway, chatBody('mock', { stream: true }));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(response.headers.get('x-accel-buffering')).toBe('no');
    expect(response.headers.get('cache-control')).toContain('no-cache');
    const events = await readSse(response);
    expect(events.at(-1)).toBe('[DONE]');
    const chunks = events.slice(0, -1).map((event) => JSON.parse(event));
    expect(chunks.every((chunk) => chunk.object === 'chat.completion.chunk')).toBe(true);
    expect(chunks[0].choices[0].delta.role).toBe('assistant');
    expect(chunks.slice(1).every((chunk) => chunk.choices[0]?.delta?.role === undefined)).toBe(true);
    expect(chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? '').join('')).toBe('Echo: Say hello');
    expect(chunks.at(-1).choices[0].finish_reason).toBe('stop');
    expect(chunks.some((chunk) => chunk.usage)).toBe(false);
    // Usage is always requested upstream, for the log.
    expect(lastUpstreamRequest().body.stream_options).toEqual({ include_usage: true });
  });

  it('streams a request sent with its own spacing and a long multi-byte prompt, asking the upstream for usage', async () => {
    // The client's bytes go upstream with stream_options added (not serialized again); 40 KB takes the iterable path.
    const prompt = `Say hello ${'héllo wörld 😀 "quoted" \\ '.repeat(1200)}`;
    const text = `{\n  "model": "mock",\n  "stream": true,\n  "messages": [ { "role": "user", "content": ${JSON.stringify(prompt)} } ]\n}\n`;
    const response = await postChat(setup.gateway, text);
    expect(response.status).toBe(200);
    const events = await readSse(response);
    expect(events.at(-1)).toBe('[DONE]');
    expect(events.slice(0, -1).some((event) => JSON.parse(event).usage)).toBe(false);
    expect(lastUpstreamRequest().body).toEqual({
      model: 'mock',
      stream: true,
      messages: [{ role: 'user', content: prompt }],
      stream_options: { include_usage: true },
    });
  });

  it('sends the usage chunk with choices: [] before [DONE] when the client asks', async () => {
    const response = await postChat(
      setup.gateway,
      chatBody('mock', { stream: true, stream_options: { include_usage: true } }),
    );
    const events = await readSse(response);
    const usageChunk = JSON.parse(events.at(-2) as string);
    expect(usageChunk.choices).toEqual([]);
    expect(usageChunk.usage.total_tokens).toBeGreaterThan(0);
    expect(events.at(-1)).toBe('[DONE]');
  });

  it('logs streams with usage and time to first token', async () => {
    const response = await postChat(setup.gateway, chatBody('mock', { stream: true }));
    await response.text();
    const [row] = await waitForLogRows(setup.gateway, [response.headers.get('x-request-id') as string]);
    expect(row).toMatchObject({ stream: 1, status: 200, outcome: 'success', usage_estimated: 0 });
    expect(row?.completion_tokens).toBeGreaterThan(0);
    expect(row?.ttft_ms).not.toBeNull();
  });

  it('fixes upstreams that repeat the role or tool-call ids in every delta', async () => {
    const events = await readSse(await postChat(setup.gateway, chatBody('repeat-role', { stream: true })));
    const chunks = events.slice(0, -1).map((event) => JSON.parse(event));
    expect(chunks.filter((chunk) => chunk.choices[0]?.delta?.role !== undefined)).toHaveLength(1);

    const toolEvents = await readSse(await postChat(setup.gateway, chatBody('tools', { stream: true })));
    const toolDeltas = toolEvents
      .slice(0, -1)
      .map((event) => JSON.parse(event))
      .flatMap((chunk) => chunk.choices[0]?.delta?.tool_calls ?? []);
    expect(toolDeltas[0]).toMatchObject({
      index: 0,
      id: 'call_mock_1',
      type: 'function',
      function: { name: 'get_weather' },
    });
    for (const delta of toolDeltas.slice(1)) {
      expect(delta.id).toBeUndefined();
      expect(delta.type).toBeUndefined();
      expect(delta.function.name).toBeUndefined();
      expect(typeof delta.function.arguments).toBe('string');
    }
    expect(toolDeltas.map((delta) => delta.function.arguments).join('')).toBe('{"city":"Paris","unit":"celsius"}');
  });

  it('synthesizes a stream when the upstream answers a stream request with JSON', async () => {
    const events = await readSse(
      await postChat(
        setup.gateway,
        chatBody('json-for-stream', { stream: true, stream_options: { include_usage: true } }),
      ),
    );
    const chunks = events.slice(0, -1).map((event) => JSON.parse(event));
    expect(chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? '').join('')).toBe('Echo: Say hello');
    expect(chunks.at(-1).choices).toEqual([]);
    expect(events.at(-1)).toBe('[DONE]');
  });

  it('estimates usage for a stream without usage and still sends a usage chunk when asked', async () => {
    const response = await postChat(
      setup.gateway,
      chatBody('no-usage', { stream: true, stream_options: { include_usage: true } }),
    );
    const events = await readSse(response);
    const usageChunk = JSON.parse(events.at(-2) as string);
    expect(usageChunk.choices).toEqual([]);
    expect(usageChunk.usage.completion_tokens).toBeGreaterThan(0);
    // The prompt is estimated from its size, kept when the stream let go of the request itself: the same estimate
    // as for the same prompt without streaming.
    const whole = await jsonOf(await postChat(setup.gateway, chatBody('no-usage')));
    expect(usageChunk.usage.prompt_tokens).toBe(whole.usage.prompt_tokens);
    const [row] = await waitForLogRows(setup.gateway, [response.headers.get('x-request-id') as string]);
    expect(row?.usage_estimated).toBe(1);
    expect(row?.prompt_tokens).toBe(whole.usage.prompt_tokens);
  });
});

describe('GET /v1/models', () => {
  it('lists the models the key may call, in the OpenAI shape', async () => {
    const response = await fetch(`${setup.gateway.baseUrl}/models`, {
      headers: { authorization: `Bearer ${setup.gateway.key}` },
    });
    expect(response.status).toBe(200);
    const body = await jsonOf(response);
    expect(body.object).toBe('list');
    expect(body.data.map((model: { id: string }) => model.id)).toContain('gpt-4o-mini');
    expect(body.data[0]).toEqual({
      id: 'mock',
      object: 'model',
      created: expect.any(Number),
      owned_by: 'mock',
      capabilities: ['chat'],
    });
  });

  it('retrieves one model and 404s the same way for unknown and forbidden ones', async () => {
    const narrow = await setup.gateway.newKey({ models: ['mock'] });
    const ok = await fetch(`${setup.gateway.baseUrl}/models/mock`, {
      headers: { authorization: `Bearer ${narrow.key}` },
    });
    expect((await jsonOf(ok)).id).toBe('mock');
    const listed = await jsonOf(
      await fetch(`${setup.gateway.baseUrl}/models`, { headers: { authorization: `Bearer ${narrow.key}` } }),
    );
    expect(listed.data.map((model: { id: string }) => model.id)).toEqual(['mock']);
    const forbidden = await fetch(`${setup.gateway.baseUrl}/models/gpt-4o-mini`, {
      headers: { authorization: `Bearer ${narrow.key}` },
    });
    const unknown = await fetch(`${setup.gateway.baseUrl}/models/does-not-exist`, {
      headers: { authorization: `Bearer ${narrow.key}` },
    });
    expect(forbidden.status).toBe(404);
    expect(unknown.status).toBe(404);
    const forbiddenBody = await jsonOf(forbidden);
    const unknownBody = await jsonOf(unknown);
    expect(forbiddenBody.error.code).toBe('model_not_found');
    expect(unknownBody.error.code).toBe('model_not_found');
    expect(forbiddenBody.error.message.replace('gpt-4o-mini', 'X')).toBe(
      unknownBody.error.message.replace('does-not-exist', 'X'),
    );
    const chat = await postChat(setup.gateway, chatBody('gpt-4o-mini'), { authorization: `Bearer ${narrow.key}` });
    expect(chat.status).toBe(404);
    expect((await jsonOf(chat)).error.code).toBe('model_not_found');
  });
});

describe('x-request-id', () => {
  it('is on every kind of response, once, different each time, with headers set before it too', async () => {
    const auth = { authorization: `Bearer ${setup.gateway.key}` };
    const limited = await setup.gateway.newKey({ name: 'request-id-limits', limits: { requestsPerMinute: 1000 } });
    const responses: Array<[string, Response]> = [
      ['chat', await postChat(setup.gateway, chatBody('mock'))],
      ['stream', await postChat(setup.gateway, chatBody('mock', { stream: true }))],
      ['limited key (x-ratelimit headers set first)', await postChat(setup.gateway, chatBody('mock'), as(limited.key))],
      ['models', await fetch(`${setup.gateway.baseUrl}/models`, { headers: auth })],
      ['model', await fetch(`${setup.gateway.baseUrl}/models/mock`, { headers: auth })],
      ['unknown model', await fetch(`${setup.gateway.baseUrl}/models/nope`, { headers: auth })],
      ['no key', await fetch(`${setup.gateway.baseUrl}/models`)],
      ['bad JSON', await postChat(setup.gateway, '{"model":')],
      ['wrong method', await fetch(`${setup.gateway.baseUrl}/chat/completions`, { headers: auth })],
      ['unknown route', await fetch(`${setup.gateway.baseUrl}/nope`, { headers: auth })],
    ];
    const ids = new Set<string>();
    for (const [name, response] of responses) {
      const id = response.headers.get('x-request-id');
      // Two headers of one name would read as "req_…, req_…".
      expect(id, name).toMatch(/^req_[0-9a-f]{32}$/);
      ids.add(id as string);
      await response.arrayBuffer();
    }
    expect(ids.size).toBe(responses.length);
    expect(responses[2]?.[1].headers.get('x-ratelimit-limit-requests')).toBe('1000');
    expect(responses.map(([, response]) => response.status)).toEqual([
      200, 200, 200, 200, 200, 404, 401, 400, 405, 404,
    ]);
  });
});

function as(key: string) {
  return { authorization: `Bearer ${key}` };
}
