import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CuttableProxy, startCuttableProxy } from './support/cuttable-proxy.js';
import { chatBody, postChat, startTestGateway, type TestGateway } from './support/gateway.js';
import { type MockUpstream, startMockUpstream } from './support/mock-openai-upstream.js';
import { type PrivateServer, startPrivateRedis } from './support/private-services.js';

/**
 * A client that sends one request at a time never exceeds a concurrency limit of one, nor a tokens-per-minute limit
 * its requests' real usage stays far under, so it must never be refused for them, whichever node serves each request:
 * a node settles the request in the shared counters (slot freed, token reservation replaced by the real usage) before
 * the client sees its answer end. Here one node reaches Redis over a slow link (as across zones), the other over a
 * fast one, and the client alternates between them: a request settled only after its answer would still be counted
 * when the next one arrives. (`test/workers.test.ts` checks the same for the workers of one node.)
 */

let mock: MockUpstream;
let redis: PrivateServer;
let farLink: CuttableProxy;
let far: TestGateway;
let near: TestGateway;

beforeAll(async () => {
  mock = await startMockUpstream();
  redis = await startPrivateRedis();
  farLink = await startCuttableProxy({ host: '127.0.0.1', port: redis.port }, 'redis', 40);
  const redisConfig = { key_prefix: `sequential-${randomBytes(4).toString('hex')}:`, command_timeout: '2s' };
  far = await startTestGateway({ mock, config: { redis: { ...redisConfig, url: farLink.url } } });
  near = await startTestGateway({
    mock,
    config: { redis: { ...redisConfig, url: redis.url } },
    dataDir: far.dataDir,
    database: far.database,
  });
});
afterAll(async () => {
  await near?.close();
  await far?.close();
  await farLink?.close();
  await redis?.close();
  await mock?.close();
});

describe('a sequential client', () => {
  it('of a key limited to one concurrent request is never refused, alternating between a far node and a near one', async () => {
    const { key } = await far.newKey({ name: 'one-at-a-time', limits: { concurrentRequests: 1 } });
    const statuses: number[] = [];
    for (let index = 0; index < 10; index++) {
      const node = index % 2 === 0 ? far : near;
      const response = await postChat(node, chatBody('mock-patient', { stream: index % 4 === 0 }), {
        authorization: `Bearer ${key}`,
      });
      await response.text();
      statuses.push(response.status);
    }
    expect(statuses).toEqual(Array(10).fill(200));
  });

  it('is never refused for tokens it did not use: each request reserves about 1,030 of 1,500 and uses about 15', async () => {
    const { key } = await far.newKey({ name: 'reserving', limits: { tokensPerMinute: 1500 } });
    const statuses: number[] = [];
    for (let index = 0; index < 10; index++) {
      const node = index % 2 === 0 ? far : near;
      const response = await postChat(node, chatBody('mock-patient', { stream: index % 4 === 0 }), {
        authorization: `Bearer ${key}`,
      });
      await response.text();
      statuses.push(response.status);
    }
    expect(statuses).toEqual(Array(10).fill(200));
  });
});
