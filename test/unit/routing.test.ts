import { describe, expect, it } from 'vitest';
import type { ModelConfig } from '../../src/config/schema.js';
import { ApiError, apiError, upstreamRejectedRequest } from '../../src/errors/api-error.js';
import type { ErrorCode } from '../../src/errors/error-codes.js';
import { openAiErrorBody } from '../../src/errors/render-openai.js';
import type { Logger } from '../../src/observability/logger.js';
import type { ChatCompletion, ChatCompletionRequest } from '../../src/openai/types.js';
import type { Provider, ProviderCall, StreamItem } from '../../src/providers/provider.js';
import { contextWindowError } from '../../src/routing/context-window.js';
import { type CircuitBreakerSettings, DeploymentHealth } from '../../src/routing/deployment-health.js';
import { Dispatcher } from '../../src/routing/dispatch.js';
import { applyParameterSupport, isNeutral } from '../../src/routing/parameters.js';
import { backoffMs, classifyFailure, retryAfterMs } from '../../src/routing/retry-policy.js';
import type { Deployment, Route, Router } from '../../src/routing/router.js';
import { pickWeighted } from '../../src/routing/select-deployment.js';
import { newTrace } from '../../src/routing/trace.js';

function clock() {
  let now = 1_000_000;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

const breaker = (overrides: Partial<CircuitBreakerSettings> = {}): CircuitBreakerSettings => ({
  enabled: true,
  failureThreshold: 5,
  failurePercentage: 80,
  minimumRequests: 10,
  minimumAccounts: 2,
  windowMs: 60_000,
  cooldownMs: 1000,
  maxCooldownMs: 1000,
  panicThreshold: 50,
  syncIntervalMs: 1000,
  ...overrides,
});

describe('deployment choice and retry policy', () => {
  it('picks by weight, and uses weight-0 standbys only when nothing weighted is left', () => {
    const a = { id: 'a', weight: 3 };
    const b = { id: 'b', weight: 1 };
    const standby = { id: 's', weight: 0 };
    expect(pickWeighted([a, b, standby], () => 0)).toBe(a);
    expect(pickWeighted([a, b, standby], () => 0.74)).toBe(a);
    expect(pickWeighted([a, b, standby], () => 0.76)).toBe(b);
    expect(pickWeighted([standby], () => 0.5)).toBe(standby);
    expect(pickWeighted([], () => 0.5)).toBeUndefined();
  });

  it('classifies failures', () => {
    const error = (code: ErrorCode) => apiError(code, 'x');
    expect(classifyFailure(error('rate_limit_exceeded'))).toBe('retry');
    expect(classifyFailure(error('upstream_overloaded'))).toBe('retry');
    // The local model's full queue is its bound: try alternatives, never park the request to retry it.
    expect(classifyFailure(error('model_overloaded'))).toBe('busy');
    expect(classifyFailure(error('upstream_unreachable'))).toBe('retry');
    expect(classifyFailure(error('upstream_auth_failed'))).toBe('next-deployment');
    expect(classifyFailure(error('upstream_timeout'))).toBe('next-deployment');
    expect(classifyFailure(error('context_length_exceeded'))).toBe('next-model');
    expect(classifyFailure(error('invalid_value'))).toBe('fatal');
    expect(classifyFailure(upstreamRejectedRequest({ status: 422 }, 'x'))).toBe('fatal');
    expect(classifyFailure(error('client_closed_request'))).toBe('fatal');
  });

  it('backs off exponentially with jitter, capped, and reads retry-after', () => {
    const policy = { initialBackoffMs: 100, maxBackoffMs: 350 };
    expect(backoffMs(1, policy, () => 1)).toBe(100);
    expect(backoffMs(2, policy, () => 1)).toBe(200);
    expect(backoffMs(3, policy, () => 1)).toBe(350);
    expect(backoffMs(2, policy, () => 0)).toBe(150);
    const limited = apiError('rate_limit_exceeded', 'x', { headers: { 'retry-after': '2', 'retry-after-ms': '1500' } });
    expect(retryAfterMs(limited)).toBe(1500);
    expect(retryAfterMs(apiError('rate_limit_exceeded', 'x', { headers: { 'retry-after': '2' } }))).toBe(2000);
  });
});

function model(overrides: Partial<ModelConfig> = {}): ModelConfig {
  return {
    name: 'm',
    capabilities: ['chat'],
    provider: 'p',
    upstreamModel: 'u',
    deployments: [],
    fallbacks: [],
    ownedBy: 'p',
    contextWindow: undefined,
    maxOutputTokens: undefined,
    streaming: true,
    parameters: { unsupported: [], onUnsupported: 'drop' },
    pricing: undefined,
    retry: { attempts: 2, initialBackoffMs: 100, maxBackoffMs: 1000, maxRetryAfterMs: 5000 },
    ...overrides,
  };
}

const request = (extra: Record<string, unknown> = {}): ChatCompletionRequest => ({
  model: 'm',
  messages: [{ role: 'user', content: 'hi' }],
  ...extra,
});

describe('parameter support', () => {
  const provider = (unsupported: string[]): Provider => ({
    name: 'p',
    type: 'anthropic',
    complete: async () => {
      throw new Error('unused');
    },
    stream: async () => [],
    unsupportedParameters: (body) => unsupported.filter((name) => body[name] !== undefined),
  });

  it('drops sampling-only parameters, refuses shape-changing ones, ignores neutral values', () => {
    const prepared = applyParameterSupport(
      request({ seed: 1, presence_penalty: 0, frequency_penalty: 0.5 }),
      model(),
      provider(['seed', 'presence_penalty', 'frequency_penalty']),
    );
    expect(prepared.dropped).toEqual(['seed', 'frequency_penalty']);
    expect(prepared.request).not.toHaveProperty('seed');
    expect(prepared.request).not.toHaveProperty('presence_penalty');
    expect(() => applyParameterSupport(request({ n: 3 }), model(), provider(['n']))).toThrow(/'n' is not supported/);
    expect(applyParameterSupport(request({ n: 1 }), model(), provider(['n'])).dropped).toEqual([]);
  });

  it('refuses everything unsupported when the model says refuse, including its own list', () => {
    const strict = model({ parameters: { unsupported: ['temperature'], onUnsupported: 'refuse' } });
    try {
      applyParameterSupport(request({ temperature: 0.5 }), strict, provider([]));
      throw new Error('expected a refusal');
    } catch (error) {
      expect(error).toBeInstanceOf(ApiError);
      expect(openAiErrorBody(error as ApiError).error).toMatchObject({
        code: 'unsupported_parameter',
        param: 'temperature',
        type: 'invalid_request_error',
      });
    }
  });

  it('knows the neutral values', () => {
    expect(isNeutral('n', 1)).toBe(true);
    expect(isNeutral('logit_bias', {})).toBe(true);
    expect(isNeutral('response_format', { type: 'text' })).toBe(true);
    expect(isNeutral('response_format', { type: 'json_object' })).toBe(false);
    expect(isNeutral('seed', 0)).toBe(false);
  });

  it('refuses a prompt that cannot fit the context window, estimating low', () => {
    expect(
      contextWindowError(
        request({ messages: [{ role: 'user', content: 'x'.repeat(590) }] }),
        model({ contextWindow: 100 }),
      ),
    ).toBeUndefined();
    const error = contextWindowError(
      request({ messages: [{ role: 'user', content: 'x'.repeat(700) }] }),
      model({ contextWindow: 100 }),
    );
    expect(error?.code).toBe('context_length_exceeded');
  });
});

describe('dispatcher', () => {
  const completion: ChatCompletion = {
    id: 'c',
    object: 'chat.completion',
    created: 1,
    model: 'u',
    choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
  };
  type Behaviour = (call: ProviderCall) => Promise<ChatCompletion>;

  function fakeProvider(name: string, behaviour: Behaviour): Provider & { calls: ProviderCall[] } {
    const calls: ProviderCall[] = [];
    return {
      name,
      type: 'openai',
      calls,
      complete: async (call) => {
        calls.push(call);
        return { completion: await behaviour(call) };
      },
      stream: async (call) => {
        calls.push(call);
        const answer = await behaviour(call);
        const chunk = (delta: Record<string, unknown>): StreamItem => ({
          chunk: { ...answer, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: null }] },
        });
        return [chunk({ role: 'assistant' }), chunk({ content: 'ok' })];
      },
    };
  }

  function routeOf(
    name: string,
    providers: Array<{ provider: Provider; weight?: number }>,
    extra: Partial<ModelConfig> = {},
  ): Route {
    const config = model({ name, ...extra });
    return {
      model: config,
      deployments: providers.map(
        ({ provider, weight }): Deployment => ({
          id: `${provider.name}/u`,
          weight: weight ?? 1,
          provider,
          model: config,
          timeouts: { connectMs: 1000, firstByteMs: 1000, idleMs: 1000 },
          pricing: undefined,
        }),
      ),
    };
  }

  function dispatcherFor(routes: Route[]) {
    const byName = new Map(routes.map((route) => [route.model.name, route]));
    const router = {
      chain: (name: string) => {
        const first = byName.get(name) as Route;
        return [first, ...first.model.fallbacks.map((fallback) => byName.get(fallback) as Route)];
      },
    } as unknown as Router;
    const waits: number[] = [];
    const dispatcher = new Dispatcher({
      router,
      health: new DeploymentHealth(breaker({ minimumRequests: 1000 })),
      random: () => 0,
      sleep: async (milliseconds) => {
        waits.push(milliseconds);
      },
    });
    return { dispatcher, waits };
  }

  const overloaded = () => apiError('upstream_overloaded', 'busy');

  it('retries with backoff, then succeeds; the trace has every attempt', async () => {
    let failures = 2;
    const provider = fakeProvider('p', async () => {
      if (failures-- > 0) throw overloaded();
      return completion;
    });
    const { dispatcher, waits } = dispatcherFor([routeOf('m', [{ provider }])]);
    const trace = newTrace();
    const result = await dispatcher.complete(request(), new AbortController().signal, trace);
    expect(result.completion.choices[0]?.message?.content).toBe('ok');
    expect(waits).toEqual([75, 150]);
    expect(trace.attempts.map((attempt) => attempt.outcome)).toEqual(['error', 'error', 'success']);
    expect(trace.served).toMatchObject({ model: 'm', deployment: 'p/u' });
  });

  it('gives up after the retry budget and goes down the fallback chain in order', async () => {
    const down = fakeProvider('down', async () => {
      throw overloaded();
    });
    const alsoDown = fakeProvider('also-down', async () => {
      throw overloaded();
    });
    const up = fakeProvider('up', async () => completion);
    const { dispatcher } = dispatcherFor([
      routeOf('m', [{ provider: down }], { fallbacks: ['f1', 'f2'], retry: { ...model().retry, attempts: 1 } }),
      routeOf('f1', [{ provider: alsoDown }], { retry: { ...model().retry, attempts: 0 } }),
      routeOf('f2', [{ provider: up }]),
    ]);
    const trace = newTrace();
    await dispatcher.complete(request(), new AbortController().signal, trace);
    expect(trace.attempts.map((attempt) => `${attempt.model}:${attempt.outcome}`)).toEqual([
      'm:error',
      'm:error',
      'f1:error',
      'f2:success',
    ]);
    expect(trace.served?.model).toBe('f2');
  });

  it('tries another deployment before retrying the failed one', async () => {
    const a = fakeProvider('a', async () => {
      throw overloaded();
    });
    const b = fakeProvider('b', async () => completion);
    const { dispatcher, waits } = dispatcherFor([routeOf('m', [{ provider: a, weight: 5 }, { provider: b }])]);
    await dispatcher.complete(request(), new AbortController().signal, newTrace());
    expect(a.calls).toHaveLength(1);
    expect(b.calls).toHaveLength(1);
    expect(waits).toEqual([]);
  });

  it('stops at once on a client error and reports it unchanged', async () => {
    const bad = apiError('invalid_value', 'no');
    const provider = fakeProvider('p', async () => {
      throw bad;
    });
    const fallback = fakeProvider('f', async () => completion);
    const { dispatcher } = dispatcherFor([
      routeOf('m', [{ provider }], { fallbacks: ['f'] }),
      routeOf('f', [{ provider: fallback }]),
    ]);
    await expect(dispatcher.complete(request(), new AbortController().signal, newTrace())).rejects.toBe(bad);
    expect(fallback.calls).toHaveLength(0);
  });

  it('honours a short retry-after and reports a long one without waiting', async () => {
    let calls = 0;
    const limited = (ms: number) =>
      apiError('rate_limit_exceeded', 'slow down', { headers: { 'retry-after-ms': String(ms) } });
    const provider = fakeProvider('p', async () => {
      calls++;
      if (calls === 1) throw limited(1200);
      throw limited(60_000);
    });
    const { dispatcher, waits } = dispatcherFor([routeOf('m', [{ provider }])]);
    await expect(dispatcher.complete(request(), new AbortController().signal, newTrace())).rejects.toMatchObject({
      status: 429,
    });
    expect(waits).toEqual([1200]);
    expect(calls).toBe(2);
  });

  it('a request cancelled while waiting stops with 499', async () => {
    const controller = new AbortController();
    const provider = fakeProvider('p', async () => {
      controller.abort();
      throw overloaded();
    });
    const { dispatcher } = dispatcherFor([routeOf('m', [{ provider }])]);
    await expect(dispatcher.complete(request(), controller.signal, newTrace())).rejects.toMatchObject({ status: 499 });
  });

  it('a deployment that answers a client error is up: its half-open probe closes the circuit', async () => {
    const time = clock();
    // Panic off (panic_threshold 0): an ejected single deployment refuses, as the operator asked.
    const settings = breaker({ minimumRequests: 1, minimumAccounts: 1, panicThreshold: 0 });
    const health = new DeploymentHealth(settings, time.now);
    let answer: ApiError = overloaded();
    const provider = fakeProvider('p', async () => {
      throw answer;
    });
    const route = routeOf('m', [{ provider }], { retry: { ...model().retry, attempts: 0 } });
    const dispatcher = new Dispatcher({
      router: { chain: () => [route] } as unknown as Router,
      health,
      sleep: async () => {},
    });
    await expect(dispatcher.complete(request(), new AbortController().signal, newTrace())).rejects.toMatchObject({
      status: 503,
    });
    expect(health.isAvailable('p/u')).toBe(false);
    await expect(dispatcher.complete(request(), new AbortController().signal, newTrace())).rejects.toMatchObject({
      code: 'no_healthy_deployment',
    });
    time.advance(1000);
    answer = apiError('invalid_value', 'bad');
    await expect(dispatcher.complete(request(), new AbortController().signal, newTrace())).rejects.toBe(answer);
    expect(health.entries()).toEqual([]);
  });

  it("never refuses a chain's last deployment: in panic it serves, and the client gets the upstream's own error", async () => {
    const time = clock();
    const health = new DeploymentHealth(breaker({ minimumRequests: 2 }), time.now);
    const calls: string[] = [];
    const provider = fakeProvider('p', async (call) => {
      calls.push(call.accountId ?? '');
      throw overloaded();
    });
    const route = routeOf('m', [{ provider }], { retry: { ...model().retry, attempts: 0 } });
    const dispatcher = new Dispatcher({ router: { chain: () => [route] } as unknown as Router, health });
    for (const account of ['a', 'b']) {
      await expect(
        dispatcher.complete(request(), new AbortController().signal, newTrace(), account),
      ).rejects.toMatchObject({ code: 'upstream_overloaded' });
    }
    // Two accounts, every request failed: ejected...
    expect(health.entries()).toMatchObject([{ deployment: 'p/u', state: 'open' }]);
    // ...but it is the only deployment of the chain: requests still reach it and get its own answer.
    await expect(dispatcher.complete(request(), new AbortController().signal, newTrace(), 'c')).rejects.toMatchObject({
      code: 'upstream_overloaded',
    });
    expect(calls).toEqual(['a', 'b', 'c']);
  });

  it('logs a provider that crashes (anything but an ApiError) before answering it as a 500', async () => {
    const logged: Array<{ err: unknown; message: string }> = [];
    const logger = { error: (fields: { err: unknown }, message: string) => logged.push({ err: fields.err, message }) };
    const crash = new TypeError("Cannot read properties of null (reading 'type')");
    const provider = fakeProvider('p', async () => {
      throw crash;
    });
    const route = routeOf('m', [{ provider }], { retry: { ...model().retry, attempts: 0 } });
    const dispatcher = new Dispatcher({
      router: { chain: () => [route] } as unknown as Router,
      health: new DeploymentHealth(breaker({ minimumRequests: 1000 })),
      logger: logger as unknown as Logger,
    });
    await expect(dispatcher.complete(request(), new AbortController().signal, newTrace())).rejects.toMatchObject({
      status: 500,
      errorCode: 'internal_error',
    });
    expect(logged).toEqual([{ err: crash, message: 'unexpected error from a provider' }]);
    // An upstream's failure is an ApiError: expected, and not logged as a crash.
    const overloadedProvider = fakeProvider('q', async () => {
      throw overloaded();
    });
    const other = routeOf('n', [{ provider: overloadedProvider }], { retry: { ...model().retry, attempts: 0 } });
    const quiet = new Dispatcher({
      router: { chain: () => [other] } as unknown as Router,
      health: new DeploymentHealth(breaker({ minimumRequests: 1000 })),
      logger: logger as unknown as Logger,
    });
    await expect(quiet.complete(request(), new AbortController().signal, newTrace())).rejects.toMatchObject({
      status: 503,
    });
    expect(logged).toHaveLength(1);
  });

  it('hands a primed stream back with every chunk, first content included', async () => {
    const provider = fakeProvider('p', async () => completion);
    const { dispatcher } = dispatcherFor([routeOf('m', [{ provider }])]);
    const stream = await dispatcher.stream(request({ stream: true }), new AbortController().signal, newTrace());
    const deltas: unknown[] = [];
    for await (const item of stream) deltas.push(item.chunk.choices[0]?.delta);
    expect(deltas).toEqual([{ role: 'assistant' }, { content: 'ok' }]);
  });
});
