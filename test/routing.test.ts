import { describe, expect, it } from 'vitest';
import { toLogEntry } from '../src/request-log/entry.js';
import { chatBody, jsonOf, postChat, waitForLogRows } from './support/gateway.js';
import { useGatewayWithMock } from './support/gateway-fixture.js';
import { manualClock } from './support/manual-clock.js';
import { defaultBehaviour, type MockHandler } from './support/mock-openai-upstream.js';
import { sendJson, sleep } from './support/mock-server.js';
import { readSse } from './support/sse.js';

/**
 * Routing through the real gateway: weighted deployments, standbys, retries with backoff and retry-after, failover
 * to fallback models across providers, stream failover before the first content token (and in-band failure after
 * it), per-deployment timeouts, the circuit breaker, per-model capabilities, and what the request log records.
 */

const upstreamCalls = (model: string) => setup.mock.requests.filter((request) => request.body.model === model).length;
const serverError = { error: { message: 'boom', type: 'server_error', param: null, code: null } };

/** Fails the first `failures` calls with `fail`, then behaves normally. */
function failFirst(failures: number, fail: MockHandler): MockHandler {
  let calls = 0;
  return (request, response) => {
    calls++;
    if (calls <= failures) return fail(request, response);
    return defaultBehaviour(request, response);
  };
}

const setup = useGatewayWithMock((mock) => ({
  // The Anthropic and Gemini mocks as providers `claude` and `google`, with the models of this file only.
  providerMocks: [],
  upstreamHandlers: {
    flaky: failFirst(2, (_request, response) => sendJson(response, 503, serverError)),
    'retry-after-short': failFirst(1, (_request, response) =>
      sendJson(
        response,
        429,
        { error: { message: 'slow down', type: 'requests', code: 'rate_limit_exceeded' } },
        { 'retry-after-ms': '300' },
      ),
    ),
    'limited-a': (_request, response) =>
      sendJson(
        response,
        429,
        { error: { message: 'quota', type: 'requests', code: 'rate_limit_exceeded' } },
        { 'retry-after': '60' },
      ),
    'slow-fail': async (_request, response) => {
      await sleep(350);
      sendJson(response, 500, serverError);
    },
  },
  config: { server: { stream_keepalive: '100ms' } },
  providers: [
    // The same upstream with a generous first-byte timeout, which one deployment below overrides.
    { name: 'patient', type: 'openai', base_url: mock.baseUrl, timeouts: { first_byte: '1h' } },
  ],
  models: [
    {
      name: 'balanced',
      // Patient: on a loaded machine a 1 s timeout would retry some requests on the other deployment, skewing the count.
      deployments: [
        { provider: 'mock-patient', upstream_model: 'lb-a', weight: 3 },
        { provider: 'mock-patient', upstream_model: 'lb-b', weight: 1 },
      ],
    },
    {
      name: 'standby',
      deployments: [
        { provider: 'mock', upstream_model: 'error-500' },
        { provider: 'mock', upstream_model: 'standby-b', weight: 0 },
      ],
      retry: { attempts: 0 },
    },
    { name: 'flaky', provider: 'mock', upstream_model: 'flaky' },
    { name: 'retry-after-short', provider: 'mock', upstream_model: 'retry-after-short' },
    {
      name: 'rate-limited-pair',
      deployments: [
        { provider: 'mock', upstream_model: 'limited-a' },
        { provider: 'mock', upstream_model: 'limited-b', weight: 0 },
      ],
    },
    {
      name: 'claude-down',
      provider: 'claude',
      upstream_model: 'error-529',
      fallbacks: ['gemini-ok'],
      pricing: { input: 3, output: 15 },
    },
    { name: 'gemini-ok', provider: 'google', upstream_model: 'mock', pricing: { input: 0.3, output: 2.5 } },
    {
      name: 'claude-overloaded-first',
      provider: 'claude',
      upstream_model: 'overloaded-first',
      fallbacks: ['gemini-ok'],
    },
    { name: 'claude-midstream', provider: 'claude', upstream_model: 'midstream-error', fallbacks: ['gemini-ok'] },
    {
      name: 'slow-then-fail',
      deployments: [
        { provider: 'mock', upstream_model: 'slow-fail' },
        { provider: 'mock', upstream_model: 'slow-standby', weight: 0 },
      ],
      retry: { attempts: 0 },
    },
    {
      name: 'short-timeout',
      deployments: [
        { provider: 'patient', upstream_model: 'hang', timeouts: { first_byte: '200ms' } },
        { provider: 'mock', upstream_model: 'timeout-standby', weight: 0 },
      ],
    },
    { name: 'no-stream', provider: 'mock', upstream_model: 'no-stream-upstream', streaming: false },
    {
      name: 'strict-seed',
      provider: 'mock',
      upstream_model: 'strict-seed',
      parameters: { unsupported: ['seed'], on_unsupported: 'refuse' },
    },
    {
      name: 'drop-seed',
      provider: 'mock',
      upstream_model: 'drop-seed',
      parameters: { unsupported: ['seed', 'logit_bias'] },
    },
    { name: 'claude-mock', provider: 'claude', upstream_model: 'mock' },
    { name: 'tiny-window', provider: 'mock', upstream_model: 'tiny-window', context_window: 10 },
    {
      name: 'tiny-window-fallback',
      provider: 'mock',
      upstream_model: 'tiny-upstream',
      context_window: 10,
      fallbacks: ['big-window'],
    },
    { name: 'big-window', provider: 'mock', upstream_model: 'big-window', context_window: 100_000 },
    { name: 'gemini-no-usage', provider: 'google', upstream_model: 'no-usage', pricing: { input: 1, output: 2 } },
  ],
}));

const longPrompt = 'word '.repeat(200);

describe('load balancing', () => {
  it('spreads requests over deployments by weight', async () => {
    for (let batch = 0; batch < 8; batch++) {
      await Promise.all(
        Array.from({ length: 25 }, () => postChat(setup.gateway, chatBody('balanced')).then((r) => r.text())),
      );
    }
    const a = upstreamCalls('lb-a');
    const b = upstreamCalls('lb-b');
    expect(a + b).toBe(200);
    // Expected 150/50; the bounds are more than five standard deviations wide.
    expect(a).toBeGreaterThan(115);
    expect(a).toBeLessThan(180);
  });

  it('uses a weight-0 standby only when the weighted deployments fail', async () => {
    const response = await postChat(setup.gateway, chatBody('standby'));
    expect(response.status).toBe(200);
    expect((await jsonOf(response)).choices[0].message.content).toBe('Echo: Say hello');
    const [row] = await waitForLogRows(setup.gateway, [response.headers.get('x-request-id') as string]);
    expect(row).toMatchObject({ deployment: 'mock/standby-b', attempt_count: 2, served_model: 'standby' });
    expect(JSON.parse(row?.attempts as string)).toMatchObject([
      { deployment: 'mock/error-500', outcome: 'error', status: 502, code: 'upstream_error' },
      { deployment: 'mock/standby-b', outcome: 'success', status: 200 },
    ]);
  });
});

describe('the attempts of a request its first attempt served', () => {
  it('are not written as JSON: the row implies the one attempt, and the entry gives it back', async () => {
    const response = await postChat(setup.gateway, chatBody('drop-seed'));
    expect(response.status).toBe(200);
    const [row] = await waitForLogRows(setup.gateway, [response.headers.get('x-request-id') as string]);
    expect(row).toMatchObject({ attempts: null, attempt_count: 1, deployment: 'mock/drop-seed' });
    expect(row?.served_latency_ms).toBeGreaterThanOrEqual(0);
    expect(row?.served_latency_ms).toBeLessThanOrEqual(row?.latency_ms ?? 0);
    expect(toLogEntry(row as Parameters<typeof toLogEntry>[0]).attempts).toEqual([
      {
        model: 'drop-seed',
        deployment: 'mock/drop-seed',
        provider: 'mock',
        upstreamModel: 'drop-seed',
        outcome: 'success',
        status: 200,
        code: null,
        waitedMs: 0,
        latencyMs: row?.served_latency_ms,
      },
    ]);
  });
});

describe('retries', () => {
  it('retries transient failures with backoff and logs every attempt', async () => {
    const response = await postChat(setup.gateway, chatBody('flaky'));
    expect(response.status).toBe(200);
    expect(upstreamCalls('flaky')).toBe(3);
    const [row] = await waitForLogRows(setup.gateway, [response.headers.get('x-request-id') as string]);
    const attempts = JSON.parse(row?.attempts as string);
    expect(attempts.map((attempt: { outcome: string }) => attempt.outcome)).toEqual(['error', 'error', 'success']);
    expect(attempts[1].waitedMs).toBeGreaterThan(0);
    expect(row?.attempt_count).toBe(3);
  });

  it("waits for the upstream's retry-after when it is short", async () => {
    const response = await postChat(setup.gateway, chatBody('retry-after-short'));
    expect(response.status).toBe(200);
    expect(upstreamCalls('retry-after-short')).toBe(2);
    // The retry waited the 300 ms the upstream asked for (the gateway's own record of the wait, not a stopwatch).
    const [row] = await waitForLogRows(setup.gateway, [response.headers.get('x-request-id') as string]);
    expect(JSON.parse(row?.attempts as string)[1].waitedMs).toBeGreaterThanOrEqual(300);
  });

  it('does not wait for a long retry-after: fails over at once and pauses the deployment', async () => {
    const first = await postChat(setup.gateway, chatBody('rate-limited-pair'));
    expect(first.status).toBe(200);
    // The other deployment was tried without waiting any part of the 60 s retry-after.
    const [row] = await waitForLogRows(setup.gateway, [first.headers.get('x-request-id') as string]);
    expect(JSON.parse(row?.attempts as string).map((attempt: { waitedMs: number }) => attempt.waitedMs)).toEqual([
      0, 0,
    ]);
    expect(upstreamCalls('limited-a')).toBe(1);
    expect(upstreamCalls('limited-b')).toBe(1);
    // Paused for 60 s: the next request goes straight to the other deployment.
    expect((await postChat(setup.gateway, chatBody('rate-limited-pair'))).status).toBe(200);
    expect(upstreamCalls('limited-a')).toBe(1);
    expect(upstreamCalls('limited-b')).toBe(2);
  });

  it('gives up on a deployment that exceeds its own first-byte timeout and fails over', async () => {
    const response = await postChat(setup.gateway, chatBody('short-timeout'));
    expect(response.status).toBe(200);
    const [row] = await waitForLogRows(setup.gateway, [response.headers.get('x-request-id') as string]);
    const [timedOut] = JSON.parse(row?.attempts as string);
    expect(timedOut).toMatchObject({ deployment: 'patient/hang', code: 'upstream_timeout' });
    // The deployment's 200 ms fired: the provider's own hour would have left this test to its timeout.
  });
});

describe('fallbacks across providers', () => {
  it('falls back from an overloaded Anthropic model to a Gemini model; the log says who served', async () => {
    const response = await postChat(setup.gateway, chatBody('claude-down'));
    expect(response.status).toBe(200);
    const body = await jsonOf(response);
    expect(body.choices[0].message.content).toBe('Echo: Say hello');
    const [row] = await waitForLogRows(setup.gateway, [response.headers.get('x-request-id') as string]);
    expect(row).toMatchObject({
      model: 'claude-down',
      served_model: 'gemini-ok',
      provider: 'google',
      upstream_model: 'mock',
      deployment: 'google/mock',
      attempt_count: 4,
      outcome: 'success',
    });
    const attempts = JSON.parse(row?.attempts as string);
    expect(attempts.slice(0, 3).every((attempt: { code: string }) => attempt.code === 'upstream_overloaded')).toBe(
      true,
    );
    expect(attempts[3]).toMatchObject({ model: 'gemini-ok', deployment: 'google/mock', outcome: 'success' });
    // What `switchboard logs --json` and the management API show.
    const entry = toLogEntry(row as Parameters<typeof toLogEntry>[0]);
    expect(entry).toMatchObject({ servedModel: 'gemini-ok', deployment: 'google/mock', attemptCount: 4 });
    expect(entry.attempts).toHaveLength(4);
    // Priced as the model that served it.
    expect(row?.cost_usd).toBeCloseTo(
      ((row?.prompt_tokens ?? 0) * 0.3 + (row?.completion_tokens ?? 0) * 2.5) / 1e6,
      12,
    );
  });

  it('fails a stream over when the upstream dies before the first content token', async () => {
    const response = await postChat(setup.gateway, chatBody('claude-overloaded-first', { stream: true }));
    expect(response.status).toBe(200);
    const events = await readSse(response);
    expect(events.at(-1)).toBe('[DONE]');
    const chunks = events.slice(0, -1).map((event) => JSON.parse(event));
    expect(chunks.some((chunk) => chunk.error)).toBe(false);
    expect(chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? '').join('')).toBe('Echo: Say hello');
    expect(chunks.filter((chunk) => chunk.choices[0]?.delta?.role).length).toBe(1);
    const [row] = await waitForLogRows(setup.gateway, [response.headers.get('x-request-id') as string]);
    expect(row).toMatchObject({ served_model: 'gemini-ok', outcome: 'success' });
  });

  it('still fails over after a keepalive committed the 200, as long as no content was sent', async () => {
    const response = await postChat(setup.gateway, chatBody('slow-then-fail', { stream: true }));
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text.startsWith(': keepalive')).toBe(true);
    expect(text).not.toContain('"error"');
    expect(text).toContain('Echo: ');
    expect(upstreamCalls('slow-standby')).toBe(1);
  });

  it('after the first content token a failure is in-band, and no fallback is tried', async () => {
    const geminiCalls = setup.providerMocks.gemini.requests.length;
    const response = await postChat(setup.gateway, chatBody('claude-midstream', { stream: true }));
    expect(response.status).toBe(200);
    const events = await readSse(response);
    expect(events.at(-1)).toBe('[DONE]');
    expect(JSON.parse(events.at(-2) as string).error.code).toBe('upstream_overloaded');
    expect(setup.providerMocks.gemini.requests.length).toBe(geminiCalls);
    const [row] = await waitForLogRows(setup.gateway, [response.headers.get('x-request-id') as string]);
    expect(row).toMatchObject({
      outcome: 'error',
      status: 503,
      deployment: 'claude/midstream-error',
      attempt_count: 1,
    });
    expect(JSON.parse(row?.attempts as string)[0]).toMatchObject({ outcome: 'error', code: 'upstream_overloaded' });
  });
});

describe('per-model capabilities', () => {
  it('streams a model that cannot stream by synthesizing the SSE from one complete answer', async () => {
    const response = await postChat(
      setup.gateway,
      chatBody('no-stream', { stream: true, stream_options: { include_usage: true } }),
    );
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const events = await readSse(response);
    const chunks = events.slice(0, -1).map((event) => JSON.parse(event));
    expect(chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? '').join('')).toBe('Echo: Say hello');
    expect(chunks.at(-1).usage.total_tokens).toBeGreaterThan(0);
    const upstream = setup.mock.requests.findLast((request) => request.body.model === 'no-stream-upstream');
    expect(upstream?.body.stream).toBeUndefined();
    expect(upstream?.body.stream_options).toBeUndefined();
  });

  it('refuses an unsupported parameter with 400 unsupported_parameter when configured to', async () => {
    const response = await postChat(setup.gateway, chatBody('strict-seed', { seed: 42 }));
    expect(response.status).toBe(400);
    expect((await jsonOf(response)).error).toMatchObject({ code: 'unsupported_parameter', param: 'seed' });
    expect(upstreamCalls('strict-seed')).toBe(0);
    // A neutral value asks for nothing and passes.
    expect((await postChat(setup.gateway, chatBody('strict-seed', { seed: null }))).status).toBe(200);
  });

  it('drops sampling-only parameters and says so in a header', async () => {
    const response = await postChat(setup.gateway, chatBody('drop-seed', { seed: 42, logit_bias: { '50256': -100 } }));
    expect(response.status).toBe(200);
    expect(response.headers.get('x-switchboard-dropped-parameters')).toBe('seed, logit_bias');
    const upstream = setup.mock.requests.findLast((request) => request.body.model === 'drop-seed');
    expect(upstream?.body.seed).toBeUndefined();
    expect(upstream?.body.logit_bias).toBeUndefined();
  });

  it('leaves user, metadata, store and prompt_cache_key out without naming them when Gemini has no field for them', async () => {
    // They ask nothing of the model (docs/api.md, Parameters a model cannot take): not worth a dropped-parameters
    // header on every answer to a client that always sends its end-user id.
    const quiet = { user: 'end-user-4711', metadata: { team: 'billing' }, store: true, prompt_cache_key: 'cache-4711' };
    const gemini = await postChat(setup.gateway, chatBody('gemini-ok', quiet));
    expect(gemini.status).toBe(200);
    expect(gemini.headers.get('x-switchboard-dropped-parameters')).toBeNull();
    const sent = JSON.stringify(setup.providerMocks.gemini.requests.at(-1)?.body);
    for (const value of ['end-user-4711', 'billing', 'cache-4711']) expect(sent).not.toContain(value);
    // Where the provider has a field, the end-user id goes on; a parameter that could change the answer is named.
    const claude = await postChat(setup.gateway, chatBody('claude-mock', { ...quiet, seed: 42 }));
    expect(claude.status).toBe(200);
    expect(claude.headers.get('x-switchboard-dropped-parameters')).toBe('seed');
    expect(setup.providerMocks.anthropic.requests.at(-1)?.body.metadata).toEqual({ user_id: 'end-user-4711' });
  });

  it('refuses, even under drop, what would change the shape of the answer (n > 1 on Anthropic)', async () => {
    const response = await postChat(setup.gateway, chatBody('claude-mock', { n: 2 }));
    expect(response.status).toBe(400);
    expect((await jsonOf(response)).error).toMatchObject({ code: 'unsupported_parameter', param: 'n' });
    expect((await postChat(setup.gateway, chatBody('claude-mock', { n: 1, logprobs: false }))).status).toBe(200);
  });

  it('refuses a prompt that cannot fit the context window, without calling the upstream', async () => {
    const response = await postChat(
      setup.gateway,
      chatBody('tiny-window', { messages: [{ role: 'user', content: longPrompt }] }),
    );
    expect(response.status).toBe(400);
    expect((await jsonOf(response)).error).toMatchObject({ code: 'context_length_exceeded', param: 'messages' });
    expect(upstreamCalls('tiny-window')).toBe(0);
  });

  it('sends a prompt too long for the model to a fallback with a larger context window', async () => {
    const response = await postChat(
      setup.gateway,
      chatBody('tiny-window-fallback', { messages: [{ role: 'user', content: longPrompt }] }),
    );
    expect(response.status).toBe(200);
    expect(upstreamCalls('tiny-upstream')).toBe(0);
    expect(upstreamCalls('big-window')).toBe(1);
  });

  it('logs a usage-less upstream answer as a marked estimate with a cost, never as zero', async () => {
    const response = await postChat(setup.gateway, chatBody('gemini-no-usage'));
    const body = await jsonOf(response);
    expect(body.usage.prompt_tokens).toBeGreaterThan(0);
    const [row] = await waitForLogRows(setup.gateway, [response.headers.get('x-request-id') as string]);
    expect(row?.usage_estimated).toBe(1);
    expect(row?.prompt_tokens).toBeGreaterThan(0);
    expect(row?.cost_usd).toBeGreaterThan(0);
  });
});

describe('circuit breaker', () => {
  let healthy = false;
  // Deployment health on a clock the test moves: each cooldown is checked on its last and its first millisecond.
  const clock = manualClock();
  const cooldownMs = 30_000;

  const breaker = useGatewayWithMock({
    upstreamHandlers: {
      'always-500': (request, response) =>
        healthy ? defaultBehaviour(request, response) : sendJson(response, 500, serverError),
    },
    config: {
      routing: {
        retry: { attempts: 0 },
        // One account sends everything here: the operator's single-tenant setting lets its failures count.
        circuit_breaker: {
          minimum_requests: 2,
          minimum_accounts: 1,
          cooldown: '30s',
          max_cooldown: '5m',
        },
      },
    },
    models: [
      {
        name: 'breaker',
        deployments: [
          { provider: 'mock', upstream_model: 'always-500' },
          { provider: 'mock', upstream_model: 'breaker-standby', weight: 0 },
        ],
      },
      { name: 'breaker-solo', provider: 'mock', upstream_model: 'always-500' },
    ],
    testHooks: { healthClock: clock.now },
  });

  const calls = () => breaker.mock.requests.filter((request) => request.body.model === 'always-500').length;
  /** A request of `model` answered 200, and whether the failing deployment was called for it. */
  const served = async (model: string) => {
    const before = calls();
    expect((await postChat(breaker.gateway, chatBody(model))).status).toBe(200);
    return calls() > before;
  };
  const unavailable = async () =>
    (await (await fetch(`${breaker.gateway.url}/metrics`)).text()).includes(
      'switchboard_deployment_unavailable{deployment="mock/always-500"} 1',
    );

  it('keeps a failing deployment out for exactly its cooldown, whatever is answered meanwhile, then probes it', async () => {
    expect(await served('breaker')).toBe(true);
    expect(await served('breaker')).toBe(true);
    // Ejected now (the clock stands still until the test moves it): the standby serves, the deployment is skipped.
    expect(await served('breaker')).toBe(false);
    expect(await unavailable()).toBe(true);

    // A model with no other deployment is never refused: its requests still go upstream (panic) and get the
    // upstream's own answer, not 503 no_healthy_deployment. Its failures while the cooldown runs, on its first and
    // its last millisecond, do not extend it.
    const solo = async () => {
      const before = calls();
      const response = await postChat(breaker.gateway, chatBody('breaker-solo'));
      expect(response.status).toBe(502);
      expect((await jsonOf(response)).error.code).toBe('upstream_error');
      expect(calls()).toBe(before + 1);
    };
    await solo();
    clock.advance(cooldownMs - 1);
    await solo();
    expect(await served('breaker')).toBe(false);

    // The first millisecond after the cooldown: one probe goes through; it fails, so the deployment is out again,
    // for twice as long.
    clock.advance(1);
    expect(await served('breaker')).toBe(true);
    expect(await served('breaker')).toBe(false);

    // The upstream recovers while the second cooldown runs: a success (served in panic) on its last millisecond does
    // not end it early.
    healthy = true;
    clock.advance(2 * cooldownMs - 1);
    expect(await served('breaker-solo')).toBe(true);
    expect(await served('breaker')).toBe(false);
    expect(await unavailable()).toBe(true);

    // Its first millisecond after: the probe succeeds and closes the circuit.
    clock.advance(1);
    expect(await served('breaker')).toBe(true);
    expect(await served('breaker')).toBe(true);
    expect(await unavailable()).toBe(false);
  });
});
