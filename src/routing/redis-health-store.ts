import type { Redis } from 'ioredis';
import type { Logger } from '../observability/logger.js';
import type { DeploymentHealth, Ejection } from './deployment-health.js';
import { type AccountTally, bucketLengthMs, liveBucketStarts } from './outcome-window.js';
import { type HealthExchange, type HealthExchangeAnswer, SharedHealthStore } from './shared-health-store.js';

/**
 * Deployment health shared between gateway nodes through Redis (shared-health-store.ts does the exchanging): one
 * pipelined round trip per exchange.
 *
 * Keys (one hash tag, so they share a slot): `{health}:state:<deployment>` = "count:until" (expires a window after
 * its cooldown), and `{health}:outcomes:<deployment>:<bucket start>` = hash of `s:<account>` / `f:<account>` counts
 * (expires a bucket after the window).
 */

export interface RedisHealthStoreOptions {
  redis: Redis;
  keyPrefix: string;
  health: DeploymentHealth;
  /** Every configured deployment id: their shared ejections are read each interval. */
  deployments: readonly string[];
  windowMs: number;
  intervalMs: number;
  logger: Logger;
  now?: () => number;
}

type Pipeline = ReturnType<Redis['pipeline']>;

export function redisHealthStore(options: RedisHealthStoreOptions): SharedHealthStore {
  return new SharedHealthStore({
    health: options.health,
    transport: (exchange) => exchangeThroughRedis(options, exchange),
    intervalMs: options.intervalMs,
    logger: options.logger,
    storeName: 'Redis',
    now: options.now,
  });
}

async function exchangeThroughRedis(
  options: RedisHealthStoreOptions,
  exchange: HealthExchange,
): Promise<HealthExchangeAnswer> {
  const { redis, windowMs, deployments } = options;
  const { now } = exchange;
  const stateKey = (deployment: string) => `${options.keyPrefix}{health}:state:${deployment}`;
  const bucketKey = (deployment: string, bucketStart: number) =>
    `${options.keyPrefix}{health}:outcomes:${deployment}:${bucketStart}`;
  const pipeline: Pipeline = redis.pipeline();
  for (const [deployment, ejection] of exchange.transitions) {
    if (!ejection) {
      // Recovered: the shared evidence that ejected it is spent too.
      const keys = liveBucketStarts(windowMs, now).map((start) => bucketKey(deployment, start));
      pipeline.del(stateKey(deployment), ...keys);
      continue;
    }
    // Kept a window past its cooldown, so a half-open deployment stays half-open until a probe reports back.
    const ttl = ejection.until - now + windowMs;
    if (ttl > 0) pipeline.set(stateKey(deployment), `${ejection.count}:${ejection.until}`, 'PX', ttl);
  }
  const bucketTtl = windowMs + bucketLengthMs(windowMs);
  for (const { deployment, deltas } of exchange.outcomes) {
    for (const delta of deltas) {
      const key = bucketKey(deployment, delta.bucketStart);
      if (delta.successes > 0) pipeline.hincrby(key, `s:${delta.account}`, delta.successes);
      if (delta.failures > 0) pipeline.hincrby(key, `f:${delta.account}`, delta.failures);
      pipeline.pexpire(key, bucketTtl);
    }
  }
  const bucketStarts = liveBucketStarts(windowMs, now);
  const firstWindowRead = pipeline.length;
  for (const deployment of exchange.judge) {
    for (const start of bucketStarts) pipeline.hgetall(bucketKey(deployment, start));
  }
  const readStates = exchange.readStates && deployments.length > 0;
  if (readStates) pipeline.mget(...deployments.map(stateKey));

  const results = await pipeline.exec();
  const failure = results?.find(([error]) => error !== null)?.[0];
  if (!results || failure) throw failure ?? new Error('the pipeline was not run');

  const merged: Record<string, AccountTally[]> = {};
  exchange.judge.forEach((deployment, index) => {
    const tallies = new Map<string, AccountTally>();
    for (let bucket = 0; bucket < bucketStarts.length; bucket++) {
      const entry = results[firstWindowRead + index * bucketStarts.length + bucket];
      addHash(tallies, (entry?.[1] ?? {}) as Record<string, string>);
    }
    merged[deployment] = [...tallies.values()];
  });
  const states: Record<string, Ejection | null> = {};
  if (readStates) {
    const values = (results.at(-1)?.[1] ?? []) as Array<string | null>;
    deployments.forEach((deployment, index) => {
      states[deployment] = parseEjection(values[index] ?? null);
    });
  }
  return { merged, states };
}

function addHash(tallies: Map<string, AccountTally>, hash: Record<string, string>): void {
  for (const [field, value] of Object.entries(hash)) {
    const account = field.slice(2);
    let tally = tallies.get(account);
    if (!tally) {
      tally = { successes: 0, failures: 0 };
      tallies.set(account, tally);
    }
    const count = Number(value);
    if (!Number.isFinite(count)) continue;
    if (field.startsWith('s:')) tally.successes += count;
    else if (field.startsWith('f:')) tally.failures += count;
  }
}

function parseEjection(value: string | null): Ejection | null {
  if (value === null) return null;
  const [count, until] = value.split(':').map(Number);
  if (count === undefined || until === undefined || !Number.isFinite(count) || !Number.isFinite(until)) return null;
  return { count, until };
}
