import { afterAll, beforeAll } from 'vitest';
import { startTestGateway, type TestGateway, type TestGatewayOptions } from './gateway.js';
import { type MockUpstream, startMockUpstream } from './mock-openai-upstream.js';

/**
 * The set-up most integration files share: a mock OpenAI upstream and a test gateway in front of it (with a key of
 * account "acme", `gateway.key`), started in beforeAll and closed in afterAll of the file that calls it.
 */
export interface GatewayFixture {
  readonly mock: MockUpstream;
  readonly gateway: TestGateway;
}

/**
 * Registers the hooks and returns the fixture; its fields exist once beforeAll has run (read them in tests and hooks,
 * never at module level). `options` are those of startTestGateway without the mock.
 */
export function useGatewayWithMock(options: Omit<TestGatewayOptions, 'mock'> = {}): GatewayFixture {
  let mock: MockUpstream | undefined;
  let gateway: TestGateway | undefined;
  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startTestGateway({ ...options, mock });
  });
  afterAll(async () => {
    await gateway?.close();
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
  };
}
