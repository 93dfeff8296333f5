import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CuttableProxy, startCuttableProxy } from './support/cuttable-proxy.js';
import { chatBody, postChat, startTestGateway, type TestGateway, waitForLogRows } from './support/gateway.js';
import { holdRequests } from './support/held-requests.js';
import { type MockUpstream, startMockUpstream } from './support/mock-openai-upstream.js';
import { type PrivateServer, startPrivateRedis } from './support/private-services.js';
import { waitFor } from './support/wait.js';

/**
 * docs/operations.md, "Limits and budgets" and "When Redis is unreachable": once Redis answers again, its counters say
 * exactly what the requests used, whatever it missed meanwhile. A Redis that runs an admission after the gateway gave
 * up waiting (frozen, then resumed) must not keep that reservation for a request the gateway refused or admitted on
 * its own counters; a settlement sent while the link to Redis was cut must still reach it once the link is back.
 * Invariant checked: the Redis spend counter equals the costs in the request log, no concurrency lease is left, and
 * the requests and tokens windows hold exactly the admitted requests and their tokens.
 */

let mock: MockUpstream;
let redis: PrivateServer;
let proxy: CuttableProxy;
let gateway: TestGateway;
let admin: Redis;
const prefix = `stalls-${randomBytes(4).toString('hex')}:`;

beforeAll(async () => {
  mock = await startMockUpstream();
  redis = await startPrivateRedis();
  proxy = await startCuttableProxy({ host: '127.0.0.1', port: redis.port }, 'redis');
  admin = new Redis(redis.url);
  gateway = await startTestGateway({
    mock,
    config: { redis: { url: proxy.url, key_prefix: prefix, command_timeout: '200ms' } },
  });
});
afterAll(async () => {
  await gateway?.close();
  admin?.disconnect();
  await proxy?.close();
  await redis?.close();
  await mock?.close();
});

const as = (key: string) => ({ authorization: `Bearer ${key}` });
const limits = { dailyBudgetUsd: 100, concurrentRequests: 50, tokensPerMinute: 1_000_000, requestsPerMinute: 1000 };

interface Counters {
  spentMicroDollars: number;
  leases: number;
  requests: number;
  tokens: number;
}

async function redisCounters(keyId: string): Promise<Counters> {
  const names = await admin.keys(`${prefix}*key:${keyId}:*`);
  const find = (suffix: RegExp) => names.find((name) => suffix.test(name));
  const sum = async (name: string | undefined) =>
    name ? Object.values(await admin.hgetall(name)).reduce((total, value) => total + Number(value), 0) : 0;
  const spend = find(/:spend:day:/);
  const leases = find(/:leases$/);
  return {
    spentMicroDollars: spend ? Number(await admin.get(spend)) : 0,
    leases: leases ? await admin.zcard(leases) : 0,
    requests: await sum(find(/:requests$/)),
    tokens: await sum(find(/:tokens$/)),
  };
}

async function loggedCounters(requestIds: string[]): Promise<Counters> {
  const rows = (await waitForLogRows(gateway, requestIds)) as Array<{
    status: number;
    cost_usd: number | null;
    total_tokens: number | null;
  }>;
  const admitted = rows.filter((row) => row.status === 200);
  return {
    spentMicroDollars: Math.round(admitted.reduce((total, row) => total + (row.cost_usd ?? 0), 0) * 1_000_000),
    leases: 0,
    requests: admitted.length,
    tokens: admitted.reduce((total, row) => total + (row.total_tokens ?? 0), 0),
  };
}

async function send(key: string, model = 'mock-patient') {
  const response = await postChat(gateway, chatBody(model), as(key));
  await response.text();
  return { status: response.status, id: response.headers.get('x-request-id') as string };
}

/** Rounding: Redis adds whole micro-dollars per request, the log keeps each cost exact. */
function agrees(redisSide: Counters, logged: Counters, requests: number): boolean {
  return (
    redisSide.leases === 0 &&
    redisSide.requests === logged.requests &&
    redisSide.tokens === logged.tokens &&
    Math.abs(redisSide.spentMicroDollars - logged.spentMicroDollars) <= requests
  );
}

/** Waits for the Redis counters to agree with the request log; fails saying how they differ if they never do. */
async function expectRedisToMatchLog(keyId: string, requestIds: string[]) {
  const logged = await loggedCounters(requestIds);
  let last = await redisCounters(keyId);
  await waitFor('the Redis counters to match the request log', async () => {
    last = await redisCounters(keyId);
    return agrees(last, logged, requestIds.length);
  }).catch(() => undefined);
  expect(agrees(last, logged, requestIds.length), JSON.stringify({ redis: last, log: logged })).toBe(true);
}

describe('a Redis that answers too late', () => {
  it('keeps no reservation of requests the gateway gave up on (refused while Redis was frozen)', async () => {
    const { key, id } = await gateway.newKey({ name: 'frozen', limits });
    const ids: string[] = [];
    for (let index = 0; index < 2; index++) ids.push((await send(key)).id);
    process.kill(redis.pid(), 'SIGSTOP');
    try {
      for (let index = 0; index < 3; index++) {
        const refused = await send(key);
        // Budgets fail closed by default: the gateway refused what it could not check.
        expect(refused.status).toBe(503);
        ids.push(refused.id);
      }
    } finally {
      process.kill(redis.pid(), 'SIGCONT');
    }
    await waitFor('Redis to admit again', async () => {
      const probe = await send(key);
      ids.push(probe.id);
      return probe.status === 200;
    });
    await expectRedisToMatchLog(id, ids);
  });

  it('settles requests that ended while the link to Redis was cut, once it is back', async () => {
    const { key, id } = await gateway.newKey({ name: 'partitioned', limits });
    const held = holdRequests(mock);
    const running = Array.from({ length: 4 }, () => postChat(gateway, chatBody('held'), as(key)));
    await held.arrived(4);
    proxy.cut();
    held.releaseAll();
    const answers = await Promise.all(running);
    const ids = answers.map((answer) => answer.headers.get('x-request-id') as string);
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      await answer.text();
    }
    proxy.mend();
    await waitFor('Redis to admit again', async () => {
      const probe = await send(key);
      ids.push(probe.id);
      return probe.status === 200;
    });
    await expectRedisToMatchLog(id, ids);
  });
});
