import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessChangesChannel } from '../src/access/change-feed.js';
import { runCliJson } from './support/cli.js';
import { chatBody, jsonOf, postChat, startTestGateway, type TestGateway, waitForLogRows } from './support/gateway.js';
import { type MockUpstream, startMockUpstream } from './support/mock-openai-upstream.js';

/**
 * Limits shared through a real Redis server (scripts/test-services.sh starts one): two gateways on the same
 * database and Redis behave as one; when Redis is unreachable the configured fallback applies.
 */

function redisUrl(): string {
  const url = process.env.SWITCHBOARD_TEST_REDIS_URL;
  if (!url) throw new Error('SWITCHBOARD_TEST_REDIS_URL is not set: run the tests through npm test (scripts/test.sh)');
  return url;
}

let mock: MockUpstream;
let first: TestGateway;
let second: TestGateway;
let prefix: string;

beforeAll(async () => {
  mock = await startMockUpstream();
  // A prefix of its own, so parallel test runs sharing the Redis server never see each other's counters.
  prefix = `test-${randomBytes(4).toString('hex')}:`;
  const config = {
    redis: { url: redisUrl(), key_prefix: prefix },
    // A slow database poll: only the Redis broadcast can make a revocation visible within a second.
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
    const responses = await Promise.all(
      Array.from({ length: 80 }, (_, index) => postChat(index % 2 === 0 ? first : second, chatBody('mock'), as(key))),
    );
    const statuses = responses.map((response) => response.status);
    const fallbacks = [...first.logLines, ...second.logLines].filter((line) =>
      line.includes('applying the configured fallback'),
    );
    expect(fallbacks).toEqual([]);
    expect(statuses.filter((status) => status === 200)).toHaveLength(25);
    expect(statuses.filter((status) => status === 429)).toHaveLength(55);
    await Promise.all(responses.map((response) => response.text()));
  });

  it('holds a concurrency limit across gateways', async () => {
    const { key } = await first.newKey({ name: 'shared-concurrency', limits: { concurrentRequests: 1 } });
    const slow = postChat(first, chatBody('slow-json'), as(key));
    await new Promise((resolve) => setTimeout(resolve, 150));
    const refused = await postChat(second, chatBody('mock'), as(key));
    expect(refused.status).toBe(429);
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
    const admin = new Redis(redisUrl());
    const keys = await admin.keys(`${prefix}*${id}*`);
    if (keys.length > 0) await admin.del(...keys);
    await admin.quit();
    const afterLoss = await postChat(second, chatBody('mock'), as(key));
    expect((await jsonOf(afterLoss)).error.code).toBe('insufficient_quota');
  });

  it('broadcasts a revocation made by the CLI to every gateway within a second', async () => {
    const victim = await first.newKey({ name: 'broadcast-victim' });
    expect((await postChat(second, chatBody('mock'), as(victim.key))).status).toBe(200);
    // Both gateways must be listening before the CLI publishes (a message sent to no subscriber is gone), so this
    // measures the broadcast, not start-up on a loaded machine.
    const admin = new Redis(redisUrl());
    const listening = async () => ((await admin.pubsub('NUMSUB', accessChangesChannel(prefix))) as [string, number])[1];
    const deadline = Date.now() + 10_000;
    while ((await listening()) < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await listening()).toBeGreaterThanOrEqual(2);
    await admin.quit();
    await runCliJson(
      ['keys', 'revoke', victim.id, '--data-dir', first.dataDir, '--config', await writeRedisConfig(first.dataDir)],
      { env: first.cliEnv },
    );
    const revokedAt = Date.now();
    let status = 200;
    while (status === 200 && Date.now() - revokedAt < 3000) {
      status = (await postChat(second, chatBody('mock'), as(victim.key))).status;
      if (status === 200) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const logs = () => `first:\n${first.logLines.join('\n')}\nsecond:\n${second.logLines.join('\n')}`;
    expect(status, logs()).toBe(401);
    expect(Date.now() - revokedAt).toBeLessThan(1000);
  });
});

async function writeRedisConfig(dataDir: string): Promise<string> {
  const { writeFileSync } = await import('node:fs');
  const path = await import('node:path');
  const file = path.join(dataDir, 'redis-cli.yaml');
  writeFileSync(file, `redis:\n  url: ${redisUrl()}\n  key_prefix: "${prefix}"\n`);
  return file;
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
