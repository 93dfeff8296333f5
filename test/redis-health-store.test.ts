import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe } from 'vitest';
import { redisHealthTransport } from '../src/routing/redis-health-store.js';
import { testRedisUrl } from './support/environment.js';
import { sharedHealthContract, windowMs } from './support/shared-health-contract.js';

/**
 * Deployment health shared between gateway nodes through a real Redis, whatever order the nodes' exchanges arrive in
 * (the contract the primary's ledger keeps too: test/unit/health-ledger.test.ts). Each test has a key prefix of its
 * own. Two gateways sharing Redis end to end: test/fault-isolation.test.ts.
 */

let redis: Redis;

beforeAll(() => {
  redis = new Redis(testRedisUrl());
});

afterAll(async () => {
  await redis?.quit();
});

describe('Redis health store, whatever order the nodes exchange in', () => {
  sharedHealthContract(() =>
    redisHealthTransport({
      redis,
      keyPrefix: `test-${randomBytes(4).toString('hex')}:`,
      deployments: ['d'],
      windowMs,
    }),
  );
});
