import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessChangesChannel } from '../src/access/change-feed.js';
import { runCliJson } from './support/cli.js';
import { testRedisUrl } from './support/environment.js';
import { chatBody, jsonOf, postChat, startTestGateway, type TestGateway, waitForLogRows } from './support/gateway.js';
import { holdRequests } from './support/held-requests.js';
import { type MockUpstream, startMockUpstream } from './support/mock-openai-upstream.js';
import { writeConfigFile } from './support/serve-process.js';
import { waitFor } from './support/wait.js';

/**
 * Limits shared through a real Redis server (scripts/test-services.sh starts one): two gateways on the same
 * database and Redis behave as one; when Redis is unreachable the configured fallback applies.
 */

let mock: MockUpstream;
let first: TestGateway;
let second: TestGateway;
let prefix: string;

beforeAll(async () => {
  mock = await startMockUpstream();
  // A prefix of its own, so parallel test runs sharing the Redis server never see each other's counters.
  prefix = `test-${randomBytes(4).toString('hex')}:`;
  const config = {
    redis: { url: testRedisUrl(), key_prefix: prefix },
    // A database poll slower than any wait of the tests: only the Redis broadcast can make a revocation visible.
    keys: { change_poll_interval: '60s' },
  };
  first = await startTestGateway({ mock, config });
  second = await startTestGateway({ mock, config, dataDir: first.dataDir, database: first.database });
});

afterAll(async () => {
  await second.close();
  await first.close();
  await mock.close();
});

const as = (key: string) => ({ authorization: `Bearer ${key}` });

describe('limits shared through Redis', () => {
  it('admits exactly the requests-per-minute limit across two gateways hammered at once', async () => {
    const { key } = await first.newKey({ name: 'shared-rpm', limits: { requestsPerMinute: 25 } });
    // Model `mock-patient`: on a loaded machine an admitted request of `mock` (1 s upstream timeouts) once came back a
    // 504, and the count of 200s read 24; every admitted request must come back 200 here, whatever the load.
    const responses = await Promise.all(
      Array.from({ length: 80 }, (_, index) =>
        postChat(index % 2 === 0 ? first : second, chatBody('mock-patient'), as(key)),
      ),
    );
    const statuses = responses.map((response) => response.status);
    const fallbacks = [...first.logLines, ...second.logLines].filter((line) =>
      line.includes('applying the configured fallback'),
    );
    expect(fallbacks).toEqual([]);
    const tally = `statuses: ${[...new Set(statuses)].map((status) => `${status} x${statuses.filter((other) => other === status).length}`).join(', ')}`;
    expect(
      statuses.filter((status) => status === 200),
      tally,
    ).toHaveLength(25);
    expect(statuses.filter((status) => status === 429)).toHaveLength(55);
    await Promise.all(responses.map((response) => response.text()));
  });

  it('holds a concurrency limit across gateways', async () => {
    const { key } = await first.newKey({ name: 'shared-concurrency', limits: { concurrentRequests: 1 } });
    const held = holdRequests(mock);
    const slow = postChat(first, chatBody('held'), as(key));
    await held.arrived(1);
    const refused = await postChat(second, chatBody('mock'), as(key));
    expect(refused.status).toBe(429);
    held.releaseAll();
    expect((await slow).status).toBe(200);
    expect((await postChat(second, chatBody('mock'), as(key))).status).toBe(200);
  });

  it('shares budgets, and re-seeds them from the request log when Redis lost its counters', async () => {
    const { key, id } = await first.newKey({ name: 'shared-budget', limits: { dailyBudgetUsd: 0.00001 } });
    const spent = await postChat(first, chatBody('mock'), as(key));
    expect(spent.status).toBe(200);
    const refused = await postChat(second, chatBody('mock'), as(key));
    expect((await jsonOf(refused)).error.code).toBe('insufficient_quota');
    // Redis forgets everything (restart without persistence): the spend comes back from the log.
    await waitForLogRows(first, [spent.headers.get('x-request-id') as string]);
    const admin = new Redis(testRedisUrl());
    // The spend counters must be there to lose: were they renamed, this would otherwise test nothing.
    const keys = await admin.keys(`${prefix}*${id}*`);
    expect(keys.filter((name) => /:spend:day:/.test(name))).toHaveLength(1);
    expect(await admin.del(...keys)).toBe(keys.length);
    expect(await admin.keys(`${prefix}*${id}*`)).toEqual([]);
    await admin.quit();
    const afterLoss = await postChat(second, chatBody('mock'), as(key));
    expect((await jsonOf(afterLoss)).error.code).toBe('insufficient_quota');
  });

  it('broadcasts a revocation made by the CLI to every gateway (before any database poll)', async () => {
    const victim = await first.newKey({ name: 'broadcast-victim' });
    expect((await postChat(second, chatBody('mock'), as(victim.key))).status).toBe(200);
    // Both gateways must be listening before the CLI publishes (a message sent to no subscriber is gone), so this
    // measures the broadcast, not start-up on a loaded machine.
    const admin = new Redis(testRedisUrl());
    const listening = async () => ((await admin.pubsub('NUMSUB', accessChangesChannel(prefix))) as [string, number])[1];
    await waitFor('both gateways to subscribe to the change channel', async () => (await listening()) >= 2);
    await admin.quit();
    await runCliJson(
      ['keys', 'revoke', victim.id, '--data-dir', first.dataDir, '--config', writeRedisConfig(first.dataDir)],
      { env: first.cliEnv },
    );
    // The database poll runs every 60 s and the wait gives up after 15 s: a refusal can only come from the broadcast.
    await waitFor('the second gateway to refuse the revoked key', async () => {
      const response = await postChat(second, chatBody('mock'), as(victim.key));
      await response.text();
      return response.status === 401;
    });
  });
});

/** A configuration file with the gateways' Redis, for a CLI that must broadcast through it. */
function writeRedisConfig(dataDir: string): string {
  return writeConfigFile(path.join(dataDir, 'redis-cli.yaml'), { redis: { url: testRedisUrl(), key_prefix: prefix } });
}

describe('when Redis is unreachable', () => {
  it('falls back to local rate limits, fails budgets closed, and says so in /readyz and /metrics', async () => {
    const gateway = await startTestGateway({
      mock,
      config: { redis: { url: 'redis://127.0.0.1:1', command_timeout: '200ms' } },
    });
    try {
      const limited = await gateway.newKey({ name: 'fallback-rpm', limits: { requestsPerMinute: 2 } });
      expect((await postChat(gateway, chatBody('mock'), as(limited.key))).status).toBe(200);
      expect((await postChat(gateway, chatBody('mock'), as(limited.key))).status).toBe(200);
      expect((await postChat(gateway, chatBody('mock'), as(limited.key))).status).toBe(429);

      const budgeted = await gateway.newKey({ name: 'fallback-budget', limits: { dailyBudgetUsd: 10 } });
      const refused = await postChat(gateway, chatBody('mock'), as(budgeted.key));
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe('1');
      expect((await jsonOf(refused)).error.code).toBe('limits_unavailable');

      const unlimited = await postChat(gateway, chatBody('mock'));
      expect(unlimited.status).toBe(200);

      const ready = await fetch(`${gateway.url}/readyz`);
      expect(ready.status).toBe(503);
      expect((await jsonOf(ready)).error.message).toContain('redis');
      const metrics = await (await fetch(`${gateway.url}/metrics`)).text();
      expect(metrics).toMatch(/switchboard_limiter_fallbacks_total\{kind="budgets",policy="deny"\} [1-9]/);
      expect(metrics).toMatch(/switchboard_limiter_fallbacks_total\{kind="rate_limits",policy="local"\} [1-9]/);
      expect(metrics).toContain('switchboard_redis_up 0');
    } finally {
      await gateway.close();
    }
  });

  it('follows other policies when configured: rate limits deny, budgets allow', async () => {
    const gateway = await startTestGateway({
      mock,
      config: {
        redis: {
          url: 'redis://127.0.0.1:1',
          command_timeout: '200ms',
          on_unavailable: { rate_limits: 'deny', budgets: 'allow' },
        },
      },
    });
    try {
      const limited = await gateway.newKey({ name: 'deny-rpm', limits: { requestsPerMinute: 100 } });
      expect((await postChat(gateway, chatBody('mock'), as(limited.key))).status).toBe(503);
      const budgeted = await gateway.newKey({ name: 'allow-budget', limits: { dailyBudgetUsd: 0.000001 } });
      expect((await postChat(gateway, chatBody('mock'), as(budgeted.key))).status).toBe(200);
      expect((await postChat(gateway, chatBody('mock'), as(budgeted.key))).status).toBe(200);
    } finally {
      await gateway.close();
    }
  });
});
