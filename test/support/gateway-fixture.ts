import { afterAll, beforeAll } from 'vitest';
import { startTestGateway, type TestGateway, type TestGatewayOptions } from './gateway.js';
import { type MockHandler, type MockUpstream, startMockUpstream } from './mock-openai-upstream.js';
import { type ProviderMocks, startProviderMocks } from './provider-mocks.js';

/**
 * The set-up most integration files share: a mock OpenAI upstream and a test gateway in front of it (with a key of
 * account "acme", `gateway.key`), started in beforeAll and closed in afterAll of the file that calls it; on request
 * also the Anthropic and Gemini mocks, and behaviours of the file's own on the OpenAI mock.
 */
export interface GatewayFixture {
  readonly mock: MockUpstream;
  readonly gateway: TestGateway;
  /** The Anthropic and Gemini mocks; only with the `providerMocks` option. */
  readonly providerMocks: ProviderMocks;
}

/** The options of startTestGateway without the mock, and what else the fixture starts. */
export interface GatewayFixtureOptions extends Omit<TestGatewayOptions, 'mock'> {
  /**
   * Start the Anthropic and Gemini mocks too, with their providers (`claude`, `google`) and the models
   * `claude-<scenario>` and `gemini-<scenario>` added: the scenarios given (none: the providers only), or `mock` and
   * `tools` for `true`.
   */
  providerMocks?: true | readonly string[];
  /** Behaviours of the OpenAI mock for models of the file's own (`mock.on`), in place before the gateway starts. */
  upstreamHandlers?: Record<string, MockHandler>;
}

/**
 * Registers the hooks and returns the fixture; its fields exist once beforeAll has run (read them in tests and hooks,
 * never at module level). Options that need something made first (a local model's file, the mock's URL) can be given
 * as a function: it runs in beforeAll, once the OpenAI mock listens.
 */
export function useGatewayWithMock(
  options: GatewayFixtureOptions | ((mock: MockUpstream) => GatewayFixtureOptions) = {},
): GatewayFixture {
  let mock: MockUpstream | undefined;
  let providerMocks: ProviderMocks | undefined;
  let gateway: TestGateway | undefined;
  beforeAll(async () => {
    const upstream = await startMockUpstream();
    mock = upstream;
    const {
      providerMocks: scenarios,
      upstreamHandlers,
      ...gatewayOptions
    } = typeof options === 'function' ? options(upstream) : options;
    for (const [model, handler] of Object.entries(upstreamHandlers ?? {})) upstream.on(model, handler);
    if (scenarios) providerMocks = await startProviderMocks(scenarios === true ? undefined : scenarios);
    gateway = await startTestGateway({
      ...gatewayOptions,
      mock: upstream,
      providers: [...(providerMocks?.providers ?? []), ...(gatewayOptions.providers ?? [])],
      models: [...(providerMocks?.models ?? []), ...(gatewayOptions.models ?? [])],
    });
  });
  afterAll(async () => {
    await gateway?.close();
    await providerMocks?.close();
    await mock?.close();
  });
  const started = <T>(value: T | undefined, name: string): T => {
    if (value === undefined) throw new Error(`the ${name} of useGatewayWithMock is read before its beforeAll ran`);
    return value;
  };
  return {
    get mock() {
      return started(mock, 'mock upstream');
    },
    get gateway() {
      return started(gateway, 'gateway');
    },
    get providerMocks() {
      return started(providerMocks, 'provider mocks (the providerMocks option)');
    },
  };
}
