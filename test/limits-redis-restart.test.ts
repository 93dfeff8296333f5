import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatBody, postChat, startTestGateway, type TestGateway, waitForLogRows } from './support/gateway.js';
import { holdRequests } from './support/held-requests.js';
import { type MockUpstream, startMockUpstream } from './support/mock-openai-upstream.js';
import { type PrivateServer, startPrivateRedis } from './support/private-services.js';
import { waitFor } from './support/wait.js';

/**
 * docs/operations.md, "Limits and budgets": a Redis that restarts empty has its spend counters seeded again from the
 * request log, which does not yet have the rows of the requests still running then. Once everything has finished,
 * the day's spend in Redis must equal the costs in the log: those requests' settlements reach a Redis that no longer
 * knows their admissions and must still count what they cost.
 */

let mock: MockUpstream;
let redis: PrivateServer;
let gateway: TestGateway;
let admin: Redis;
const prefix = `restart-${randomBytes(4).toString('hex')}:`;

beforeAll(async () => {
  mock = await startMockUpstream();
  redis = await startPrivateRedis();
  admin = new Redis(redis.url, { maxRetriesPerRequest: null });
  gateway = await startTestGateway({ mock, config: { redis: { url: redis.url, key_prefix: prefix } } });
});
afterAll(async () => {
  await gateway?.close();
  admin?.disconnect();
  await redis?.close();
  await mock?.close();
});

const as = (key: string) => ({ authorization: `Bearer ${key}` });

async function spentInRedis(keyId: string): Promise<number> {
  const [name] = await admin.keys(`${prefix}*key:${keyId}:spend:day:*`);
  return name ? Number(await admin.get(name)) : 0;
}

async function spentInLog(requestIds: string[]): Promise<number> {
  const rows = (await waitForLogRows(gateway, requestIds)) as Array<{ cost_usd: number | null }>;
  return Math.round(rows.reduce((total, row) => total + (row.cost_usd ?? 0), 0) * 1_000_000);
}

async function admitted(key: string, ids: string[]): Promise<boolean> {
  const response = await postChat(gateway, chatBody('mock-patient'), as(key));
  await response.text();
  ids.push(response.headers.get('x-request-id') as string);
  return response.status === 200;
}

describe('a Redis that restarts empty while requests run', () => {
  it('counts the cost of the requests that were running once they finish', async () => {
    const { key, id } = await gateway.newKey({ name: 'restarted', limits: { dailyBudgetUsd: 100 } });
    const ids: string[] = [];
    expect(await admitted(key, ids)).toBe(true);
    // A request that ended before the restart is read from the log: its row must be there by then.
    await waitForLogRows(gateway, ids);
    const held = holdRequests(mock);
    const running = Array.from({ length: 3 }, () => postChat(gateway, chatBody('held'), as(key)));
    await held.arrived(3);
    await redis.kill();
    await redis.start();
    // The first admission after the restart seeds the counter from the log, without the three requests running.
    await waitFor('Redis to admit again', () => admitted(key, ids));
    held.releaseAll();
    for (const answer of await Promise.all(running)) {
      expect(answer.status).toBe(200);
      await answer.text();
      ids.push(answer.headers.get('x-request-id') as string);
    }
    const logged = await spentInLog(ids);
    let counted = await spentInRedis(id);
    await waitFor('the Redis spend to match the request log', async () => {
      counted = await spentInRedis(id);
      return Math.abs(counted - logged) <= ids.length;
    }).catch(() => undefined);
    // Rounding: Redis adds whole micro-dollars per request, the log keeps each cost exact.
    expect(Math.abs(counted - logged), JSON.stringify({ redis: counted, log: logged })).toBeLessThanOrEqual(ids.length);
  });
});
