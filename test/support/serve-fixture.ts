import { afterAll, beforeAll } from 'vitest';
import { type MockUpstream, startMockUpstream } from './mock-openai-upstream.js';
import { killStrayServes } from './serve-process.js';

/**
 * The set-up of a file that starts `serve` processes: a mock OpenAI upstream for them, started in beforeAll; afterAll
 * kills any `serve` a failing test left running, then closes the mock. Read `mock` in tests and hooks only.
 */
export function useMockForServes(): { readonly mock: MockUpstream } {
  let mock: MockUpstream | undefined;
  beforeAll(async () => {
    mock = await startMockUpstream();
  });
  afterAll(async () => {
    await killStrayServes();
    await mock?.close();
  });
  return {
    get mock() {
      if (!mock) throw new Error('the mock of useMockForServes is read before its beforeAll ran');
      return mock;
    },
  };
}
