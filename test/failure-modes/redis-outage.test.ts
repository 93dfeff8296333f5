import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { startPrivateRedis } from '../support/private-services.js';
import { useMockForServes } from '../support/serve-fixture.js';
import { type Served, startServe } from '../support/serve-process.js';
import { waitFor } from '../support/wait.js';
import { type ChatResult, chat, metric, mockModels, readiness } from './support.js';

/**
 * docs/operations.md, "When Redis is unreachable": commands fail fast (`redis.command_timeout`) and
 * `redis.on_unavailable` decides, per kind (local / allow / deny); `/readyz` answers 503 and `switchboard_redis_up` is
 * 0 while the connection is down; the connection comes back by itself; budget counters lost by a Redis restart are
 * re-seeded from the request log; requests of keys without limits never touch Redis. A real redis-server of the
 * test's own is frozen (SIGSTOP), killed and started again under a real `serve` process.
 */

const commandTimeoutMs = 500;
/** A request that takes this long hangs: ten command timeouts, far more than one fallback decision needs. */
const hangMs = commandTimeoutMs * 10;

const serves = useMockForServes();

interface Keys {
  /** 3 requests a minute. */
  rate: string;
  /** $0.05 a day: the first request (about $0.15) uses it up. */
  budget: string;
  /** No limits at all. */
  open: string;
}

async function createKeys(node: Served): Promise<Keys> {
  await node.cli('accounts', 'create', 'acme');
  const create = (name: string) =>
    node.cli<{ key: string; id: string }>('keys', 'create', '--account', 'acme', '--name', name);
  const [rate, budget, open] = await Promise.all([create('rate'), create('budget'), create('open')]);
  await node.cli('keys', 'set-limits', rate.id, '--rpm', '3');
  await node.cli('keys', 'set-limits', budget.id, '--daily-budget', '0.05');
  return { rate: rate.key, budget: budget.key, open: open.key };
}

/** Sends `count` requests one after another, each aborted (and so failing the test) if it hangs. */
async function requests(node: Served, key: string, count: number): Promise<ChatResult[]> {
  const results: ChatResult[] = [];
  for (let index = 0; index < count; index++) {
    results.push(await chat(node, key, { signal: AbortSignal.timeout(hangMs) }));
  }
  return results;
}

const outcome = (result: ChatResult) => (result.status === 200 ? 200 : `${result.status} ${result.code}`);

/** What each policy does to the rate-limited key (3 a minute; 5 sent) and to the spent budget key. */
const expected = {
  local: {
    rate: [200, 200, 200, '429 rate_limit_exceeded', '429 rate_limit_exceeded'],
    budget: '429 insufficient_quota',
  },
  allow: { rate: [200, 200, 200, 200, 200], budget: 200 },
  deny: { rate: Array(5).fill('503 limits_unavailable'), budget: '503 limits_unavailable' },
} as const;

describe.each(['local', 'allow', 'deny'] as const)('redis.on_unavailable: %s', (policy) => {
  it('applies the policy while Redis is frozen or gone, reports it, and re-seeds the counters when Redis is back', async () => {
    const redis = await startPrivateRedis();
    try {
      const node = await startServe({
        config: {
          redis: {
            url: redis.url,
            key_prefix: `outage-${randomBytes(4).toString('hex')}:`,
            command_timeout: `${commandTimeoutMs}ms`,
            on_unavailable: { rate_limits: policy, budgets: policy },
          },
          request_log: { flush_interval: '50ms' },
          ...mockModels(serves.mock),
        },
      });
      const keys = await createKeys(node);

      // Redis up: the budget is spent by one request (and the log has its cost), the shared rate limit counts 3.
      expect((await chat(node, keys.budget)).status).toBe(200);
      expect(outcome(await chat(node, keys.budget))).toBe('429 insufficient_quota');
      expect((await requests(node, keys.rate, 4)).map(outcome)).toEqual([200, 200, 200, '429 rate_limit_exceeded']);
      expect(await metric(node, 'switchboard_redis_up')).toBe(1);

      // Frozen: Redis accepts connections and never answers. Every command must time out, not wait.
      process.kill(redis.pid(), 'SIGSTOP');
      try {
        await waitFor('/readyz to report Redis', async () => {
          const ready = await readiness(node);
          return ready.status === 503 && ready.body.includes('redis');
        });
        const frozen = await requests(node, keys.budget, 1);
        expect(frozen.map(outcome)).toEqual([expected[policy].budget]);
        expect((await chat(node, keys.open, { signal: AbortSignal.timeout(hangMs) })).status).toBe(200);
      } finally {
        process.kill(redis.pid(), 'SIGCONT');
      }

      // Gone: the connection is lost, the gauge drops; this node's own counters (or none) decide.
      await redis.kill();
      await waitFor(
        'switchboard_redis_up to drop to 0',
        async () => (await metric(node, 'switchboard_redis_up')) === 0,
      );
      const ready = await readiness(node);
      expect(ready.status).toBe(503);
      expect(ready.body).toContain('not_ready');
      expect((await requests(node, keys.rate, 5)).map(outcome)).toEqual(expected[policy].rate);
      expect((await requests(node, keys.budget, 1)).map(outcome)).toEqual([expected[policy].budget]);
      expect((await requests(node, keys.open, 3)).map(outcome)).toEqual([200, 200, 200]);
      const fallbacks = await metric(
        node,
        `switchboard_limiter_fallbacks_total{kind="rate_limits",policy="${policy}"}`,
      );
      expect(fallbacks).toBeGreaterThanOrEqual(5);
      expect(
        await metric(node, `switchboard_limiter_fallbacks_total{kind="budgets",policy="${policy}"}`),
      ).toBeGreaterThanOrEqual(2);

      // Back, empty (no persistence): the connection returns by itself, /readyz and the gauge recover, the budget
      // counter is re-seeded from the request log (still spent, whatever was admitted meanwhile), and the shared
      // rate limit counts afresh.
      await redis.start();
      await waitFor('switchboard_redis_up to recover', async () => (await metric(node, 'switchboard_redis_up')) === 1);
      await waitFor('/readyz to answer 200', async () => (await readiness(node)).status === 200);
      expect((await requests(node, keys.budget, 1)).map(outcome)).toEqual(['429 insufficient_quota']);
      expect((await requests(node, keys.rate, 4)).map(outcome)).toEqual([200, 200, 200, '429 rate_limit_exceeded']);

      // No crash at any point: the same process is still serving, and stops cleanly.
      expect(node.process.exitCode).toBeNull();
      expect(await node.stop()).toBe(0);
    } finally {
      await redis.close();
    }
  });
});
