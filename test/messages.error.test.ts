import { describe, expect, it } from 'vitest';
import { accumulate, parseEvents } from './support/anthropic-events.js';
import { jsonOf, waitForLogRows } from './support/gateway.js';
import { useGatewayWithMock } from './support/gateway-fixture.js';
import { waitFor } from './support/wait.js';

/**
 * /v1/messages and /v1/messages/count_tokens when something is wrong: the client's input, its credentials, the
 * upstream (before and after the stream started). Every non-2xx is Anthropic's error shape with Anthropic's statuses;
 * a failure after the stream started is an `error` event, never a clean-looking end. And count_tokens: Anthropic's own
 * count for Anthropic models, an estimate (never 0) for the others, logged under its own endpoint.
 */

const setup = useGatewayWithMock({
  providerMocks: ['mock', 'error-400', 'error-429', 'error-529', 'midstream-error', 'midstream-reset', 'slow-stream'],
  models: [
    { name: 'claude-overloaded', provider: 'claude', upstream_model: 'overloaded-first', fallbacks: ['gpt-4o-mini'] },
    {
      name: 'mixed',
      deployments: [
        { provider: 'mock', upstream_model: 'mock', weight: 1 },
        { provider: 'claude', upstream_model: 'mock', weight: 0 },
      ],
    },
  ],
});

function post(body: unknown, options: { path?: string; headers?: Record<string, string>; raw?: string } = {}) {
  return fetch(`${setup.gateway.url}${options.path ?? '/v1/messages'}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${setup.gateway.key}`, 'content-type': 'application/json', ...options.headers },
    body: options.raw ?? JSON.stringify(body),
  });
}

const hello = (model: string, extra: Record<string, unknown> = {}) => ({
  model,
  max_tokens: 50,
  messages: [{ role: 'user', content: 'Say hello' }],
  ...extra,
});

async function expectAnthropicError(response: Response, status: number, type: string) {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toContain('application/json');
  const body = await jsonOf(response);
  expect(body).toEqual({
    type: 'error',
    error: { type, message: expect.any(String) },
    request_id: response.headers.get('x-request-id'),
  });
  return body.error.message as string;
}

describe('bad input', () => {
  it('names the field at fault, in Anthropic’s words and shape', async () => {
    expect(
      await expectAnthropicError(await post({ model: 'gpt-4o-mini', messages: [] }), 400, 'invalid_request_error'),
    ).toBe('max_tokens: Field required');
    const message = await expectAnthropicError(
      await post(hello('gpt-4o-mini', { messages: [{ role: 'user', content: [{ type: 'image', source: {} }] }] })),
      400,
      'invalid_request_error',
    );
    expect(message).toBe('messages.0.content.0.source.type: Field required');
    expect(
      await expectAnthropicError(await post(hello('gpt-4o-mini', { temperature: 2 })), 400, 'invalid_request_error'),
    ).toBe('temperature: Input should be less than or equal to 1');
  });

  it('refuses integers too large to be exact (above 2^53 - 1) by name, without calling the upstream', async () => {
    // 2^53 + 1 reads as 2^53: a translated request would send another number than the client wrote.
    const upstreamCalls = () => setup.mock.requests.length + setup.providerMocks.anthropic.requests.length;
    const before = upstreamCalls();
    const tooLarge = '9007199254740993';
    const bodies: [string, string][] = [
      ['/v1/messages', `{"model":"gpt-4o-mini","max_tokens":${tooLarge},"messages":[{"role":"user","content":"hi"}]}`],
      [
        '/v1/messages',
        `{"model":"claude-mock","max_tokens":16,"top_k":${tooLarge},"messages":[{"role":"user","content":"hi"}]}`,
      ],
      [
        '/v1/messages/count_tokens',
        `{"model":"gpt-4o-mini","thinking":{"type":"enabled","budget_tokens":${tooLarge}},"messages":[{"role":"user","content":"hi"}]}`,
      ],
    ];
    const messages = [];
    for (const [path, raw] of bodies) {
      messages.push(await expectAnthropicError(await post(undefined, { path, raw }), 400, 'invalid_request_error'));
    }
    expect(messages).toEqual([
      'max_tokens: Input should be less than or equal to 9007199254740991',
      'top_k: Input should be less than or equal to 9007199254740991',
      'thinking.budget_tokens: Input should be less than or equal to 9007199254740991',
    ]);
    expect(upstreamCalls()).toBe(before);
  });

  it('refuses a body that is not JSON, and an unknown model with the same 404 as a forbidden one', async () => {
    await expectAnthropicError(await post(undefined, { raw: '{"model":' }), 400, 'invalid_request_error');
    await expectAnthropicError(await post(hello('no-such-model')), 404, 'not_found_error');
    const { key } = await setup.gateway.newKey({ name: 'narrow', models: ['mock'] });
    await expectAnthropicError(
      await post(hello('gpt-4o-mini'), { headers: { authorization: `Bearer ${key}` } }),
      404,
      'not_found_error',
    );
  });

  it('refuses, by name, what a translated model cannot do', async () => {
    const message = await expectAnthropicError(
      await post(hello('gpt-4o-mini', { tools: [{ type: 'web_search_20250305', name: 'web_search' }] })),
      400,
      'invalid_request_error',
    );
    expect(message).toContain('tools.0.type');
    expect(message).toContain('web_search');
    await expectAnthropicError(await post(hello('gpt-4o-mini', { max_tokens: 0 })), 400, 'invalid_request_error');
  });

  it('passes what only Anthropic can run through to Anthropic models', async () => {
    const response = await post(
      hello('claude-mock', { max_tokens: 0, tools: [{ type: 'web_search_20250305', name: 'web_search' }] }),
    );
    expect(response.status).toBe(200);
    expect(setup.providerMocks.anthropic.requests.at(-1)?.body.tools).toEqual([
      { type: 'web_search_20250305', name: 'web_search' },
    ]);
  });

  it('decides per deployment: what a translated deployment cannot take goes to the Anthropic one', async () => {
    const plain = await post(hello('mixed'));
    expect(plain.status).toBe(200);
    expect(setup.mock.requests.at(-1)?.body.model).toBe('mock');
    const anthropicBefore = setup.providerMocks.anthropic.requests.length;
    const withServerTool = await post(hello('mixed', { tools: [{ type: 'web_search_20250305', name: 'web_search' }] }));
    expect(withServerTool.status).toBe(200);
    expect(setup.providerMocks.anthropic.requests.length).toBe(anthropicBefore + 1);
    expect(setup.providerMocks.anthropic.requests.at(-1)?.body.tools).toEqual([
      { type: 'web_search_20250305', name: 'web_search' },
    ]);
  });

  it('answers an unsupported method in Anthropic’s shape', async () => {
    const response = await fetch(`${setup.gateway.url}/v1/messages`, {
      headers: { authorization: `Bearer ${setup.gateway.key}` },
    });
    expect(response.status).toBe(405);
    expect((await jsonOf(response)).type).toBe('error');
  });
});

describe('authentication', () => {
  it('refuses a request with only x-api-key, says to use a Bearer token, and never echoes the key', async () => {
    const secret = setup.gateway.key;
    const response = await fetch(`${setup.gateway.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': secret, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify(hello('gpt-4o-mini')),
    });
    const message = await expectAnthropicError(response, 401, 'authentication_error');
    expect(message).toContain('Authorization: Bearer');
    expect(message).toContain('ANTHROPIC_AUTH_TOKEN');
    expect(message).not.toContain(secret);
    expect(message).not.toContain(secret.slice(6, 20));
  });

  it('refuses a wrong key as authentication_error', async () => {
    const response = await post(hello('gpt-4o-mini'), { headers: { authorization: 'Bearer sk-sb-not-a-key' } });
    await expectAnthropicError(response, 401, 'authentication_error');
  });

  it('applies the key’s rate limit, as a rate_limit_error with retry-after', async () => {
    const { key } = await setup.gateway.newKey({ name: 'rpm-1', limits: { requestsPerMinute: 1 } });
    const headers = { authorization: `Bearer ${key}` };
    expect((await post(hello('gpt-4o-mini'), { headers })).status).toBe(200);
    const refused = await post(hello('gpt-4o-mini'), { headers });
    await expectAnthropicError(refused, 429, 'rate_limit_error');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});

describe('upstream failures', () => {
  it('reports an overloaded upstream as 529 overloaded_error, from Anthropic or from an OpenAI-compatible one', async () => {
    await expectAnthropicError(await post(hello('claude-error-529')), 529, 'overloaded_error');
    await expectAnthropicError(await post(hello('error-503')), 529, 'overloaded_error');
    await expectAnthropicError(await post(hello('error-500')), 500, 'api_error');
  });

  it('passes Anthropic’s refusal of the request and its rate limits on', async () => {
    const refused = await expectAnthropicError(await post(hello('claude-error-400')), 400, 'invalid_request_error');
    expect(refused).toContain('mock upstream error 400');
    const limited = await post(hello('claude-error-429'));
    await expectAnthropicError(limited, 429, 'rate_limit_error');
    expect(limited.headers.get('retry-after')).toBe('7');
  });

  it('fails over when Anthropic is overloaded before any content, even to a translated model', async () => {
    const response = await post(hello('claude-overloaded', { stream: true }));
    expect(response.status).toBe(200);
    const message = accumulate(parseEvents(await response.text()));
    expect(message.content).toEqual([{ type: 'text', text: 'Echo: Say hello' }]);
    const [row] = await waitForLogRows(setup.gateway, [response.headers.get('x-request-id') as string]);
    expect(row).toMatchObject({ status: 200, outcome: 'success', endpoint: 'messages' });
  });

  it.each([
    ['a translated stream whose upstream fails', 'midstream-error'],
    ['a translated stream whose connection drops', 'midstream-reset'],
    ['a passed-through stream with an error event', 'claude-midstream-error'],
    ['a passed-through stream whose connection drops', 'claude-midstream-reset'],
  ])('ends %s with an error event, never message_stop, and logs it', async (_what, model) => {
    const response = await post(hello(model, { stream: true }));
    expect(response.status).toBe(200);
    const events = parseEvents(await response.text());
    expect(events[0]?.event).toBe('message_start');
    const last = events.at(-1);
    expect(last?.event).toBe('error');
    expect(last?.data).toEqual({ type: 'error', error: { type: expect.any(String), message: expect.any(String) } });
    expect(events.some((event) => event.event === 'message_stop')).toBe(false);
    const [row] = await waitForLogRows(setup.gateway, [response.headers.get('x-request-id') as string]);
    expect(row).toMatchObject({ outcome: 'error', stream: 1, endpoint: 'messages' });
    expect(row?.status).toBeGreaterThanOrEqual(500);
  });
});

describe('client disconnects', () => {
  it.each([
    ['translated', 'slow-stream', () => setup.mock.requests],
    ['passed through', 'claude-slow-stream', () => setup.providerMocks.anthropic.requests],
  ])('abort the %s upstream request at once and log the request as cancelled', async (_kind, model, requests) => {
    const response = await post(hello(model, { stream: true }));
    const requestId = response.headers.get('x-request-id') as string;
    const reader = response.body?.getReader();
    await reader?.read();
    await reader?.cancel();
    const upstream = requests().at(-1);
    await waitFor('the upstream request to be aborted', () => upstream?.aborted);
    const [row] = await waitForLogRows(setup.gateway, [requestId]);
    expect(row).toMatchObject({ outcome: 'cancelled', status: 499, endpoint: 'messages' });
  });
});

describe('POST /v1/messages/count_tokens', () => {
  const countBody = (model: string) => ({
    model,
    system: 'You are terse.',
    messages: [{ role: 'user', content: 'How many tokens is this?' }],
  });

  it('forwards Anthropic models to Anthropic’s own count, only the model mapped', async () => {
    const response = await post(countBody('claude-mock'), {
      path: '/v1/messages/count_tokens?beta=true',
      headers: { 'anthropic-version': '2023-06-01', 'anthropic-beta': 'token-counting-2024-11-01' },
    });
    expect(response.status).toBe(200);
    const body = await jsonOf(response);
    const upstream = setup.providerMocks.anthropic.requests.at(-1);
    expect(upstream?.path).toBe('/v1/messages/count_tokens?beta=true');
    expect(upstream?.body).toEqual({ ...countBody('mock') });
    expect(upstream?.headers['anthropic-beta']).toBe('token-counting-2024-11-01');
    const prompt = JSON.stringify({ system: upstream?.body.system, messages: upstream?.body.messages });
    expect(body).toEqual({ input_tokens: Math.ceil(prompt.length / 4) });
    const [row] = await waitForLogRows(setup.gateway, [response.headers.get('x-request-id') as string]);
    expect(row).toMatchObject({ endpoint: 'count_tokens', model: 'claude-mock', status: 200, stream: 0 });
  });

  it('estimates for other models, never 0, without calling the upstream', async () => {
    const before = setup.mock.requests.length;
    const response = await post(countBody('gpt-4o-mini'), { path: '/v1/messages/count_tokens' });
    const body = await jsonOf(response);
    expect(body.input_tokens).toBeGreaterThan(0);
    expect(Object.keys(body)).toEqual(['input_tokens']);
    expect(setup.mock.requests.length).toBe(before);
    const image = await jsonOf(
      await post(
        {
          model: 'gpt-4o-mini',
          messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'url', url: 'https://x/y.png' } }] }],
        },
        { path: '/v1/messages/count_tokens' },
      ),
    );
    expect(image.input_tokens).toBeGreaterThanOrEqual(1600);
  });

  it('refuses bad input in Anthropic’s shape', async () => {
    const message = await expectAnthropicError(
      await post({ model: 'gpt-4o-mini', messages: [] }, { path: '/v1/messages/count_tokens' }),
      400,
      'invalid_request_error',
    );
    expect(message).toContain('messages');
    await expectAnthropicError(
      await post(countBody('unknown'), { path: '/v1/messages/count_tokens' }),
      404,
      'not_found_error',
    );
  });
});
