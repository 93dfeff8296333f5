import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { apiRequest, createTestUser, testPassword } from './support/console.js';
import { testRedisUrl } from './support/environment.js';
import { startTestGateway, type TestGateway } from './support/gateway.js';
import { type MockUpstream, startMockUpstream } from './support/mock-openai-upstream.js';

/**
 * The sign-in throttle shared by two nodes through Redis (scripts/test-services.sh starts one): a client guessing a
 * password gets the same budget however the load balancer spreads its attempts, and the user still signs in at once
 * from another address, through either node.
 */

let mock: MockUpstream;
let first: TestGateway;
let second: TestGateway;

beforeAll(async () => {
  mock = await startMockUpstream();
  const config = {
    redis: { url: testRedisUrl(), key_prefix: `test-${randomBytes(4).toString('hex')}:` },
    console: { sign_in_max_failures: 2, trust_proxy: true },
  };
  first = await startTestGateway({ mock, config });
  second = await startTestGateway({ mock, config, dataDir: first.dataDir, database: first.database });
  await createTestUser(first, { email: 'target@acme.test', account: 'acme' });
});

afterEach(() => {
  vi.useRealTimers();
});

afterAll(async () => {
  await second?.close();
  await first?.close();
  await mock?.close();
});

const attempt = (node: TestGateway, password: string, client: string) =>
  apiRequest(node.url, 'POST', '/api/session', {
    body: { email: 'target@acme.test', password },
    headers: { 'x-forwarded-for': client },
  });

describe('sign-in throttle shared through Redis', () => {
  it("counts a client's failures on every node, and never keeps the user out from another address", async () => {
    // The clock stands still (both nodes run in this process) until the other node has been asked: on a busy machine
    // the first waits (1 s, 2 s) could otherwise run out between two requests.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    // The free failures, spread over both nodes.
    expect((await attempt(first, 'wrong guess one', '203.0.113.50')).status).toBe(401);
    expect((await attempt(second, 'wrong guess two', '203.0.113.50')).status).toBe(401);
    // Keep guessing, alternating nodes, until the growing wait refuses the client on both.
    let refusedOn: TestGateway | undefined;
    for (let index = 0; index < 8 && !refusedOn; index++) {
      const node = index % 2 === 0 ? first : second;
      const response = await attempt(node, `wrong guess ${index}`, '203.0.113.50');
      if (response.status === 429) refusedOn = node;
      else expect(response.status).toBe(401);
    }
    expect(refusedOn).toBeDefined();
    const otherNode = refusedOn === first ? second : first;
    const elsewhere = await attempt(otherNode, testPassword, '203.0.113.50');
    expect(elsewhere.status).toBe(429);
    expect(Number(elsewhere.headers.get('retry-after'))).toBeGreaterThan(0);
    vi.useRealTimers();
    // The user, from their own address, through either node.
    expect((await attempt(first, testPassword, '198.51.100.8')).status).toBe(200);
    expect((await attempt(second, testPassword, '198.51.100.8')).status).toBe(200);
    const logs = [...first.logLines, ...second.logLines].join('\n');
    expect(logs).not.toContain('throttled by this node alone');
  });

  it('checks no more passwords than the free failures when guesses are sent at once to both nodes', async () => {
    // As above: a guess arriving after the first wait may rightly be checked, so the clock stands still.
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    const guesses = await Promise.all(
      Array.from({ length: 30 }, (_, index) =>
        attempt(index % 2 === 0 ? first : second, `parallel guess ${index}`, '203.0.113.77'),
      ),
    );
    const statuses = guesses.map((response) => response.status);
    expect(statuses.filter((status) => status === 401)).toHaveLength(2);
    expect(statuses.filter((status) => status === 429)).toHaveLength(28);
    // A right password from the guessing client is refused too; from elsewhere it is not, and it gives back what it
    // counted (the next right one from there is not slowed).
    expect((await attempt(first, testPassword, '203.0.113.77')).status).toBe(429);
    vi.useRealTimers();
    for (let index = 0; index < 4; index++)
      expect((await attempt(second, testPassword, '198.51.100.9')).status).toBe(200);
  });
});
