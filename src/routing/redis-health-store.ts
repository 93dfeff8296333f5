import type { Redis } from 'ioredis';
import type { Logger } from '../observability/logger.js';
import type { DeploymentHealth, Ejection } from './deployment-health.js';
import { type AccountTally, bucketLengthMs, liveBucketStarts } from './outcome-window.js';
import { ejectScript, recoverScript } from './redis-health-scripts.js';
import {
  type HealthExchange,
  type HealthExchangeAnswer,
  type HealthTransport,
  SharedHealthStore,
} from './shared-health-store.js';

/**
 * Deployment health shared between gateway nodes through Redis (shared-health-store.ts does the exchanging): one
 * pipelined round trip per exchange.
 *
 * Keys (one hash tag, so they share a slot): `{health}:state:<deployment>` = "count:until" (expires a window after
 * its cooldown), `{health}:recovered:<deployment>` = the ejection it last recovered from (as long), and
 * `{health}:outcomes:<deployment>:<bucket start>` = hash of `s:<account>` / `f:<account>` counts (expires a bucket
 * after the window). Ejections and recoveries are written by scripts (redis-health-scripts.ts).
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

type ScriptArguments = Array<string | number>;
type Pipeline = ReturnType<Redis['pipeline']> & {
  switchboardHealthEject(keys: number, ...args: ScriptArguments): Pipeline;
  switchboardHealthRecover(keys: number, ...args: ScriptArguments): Pipeline;
};

export type RedisHealthTransportOptions = Omit<RedisHealthStoreOptions, 'health' | 'intervalMs' | 'logger' | 'now'>;

export function redisHealthStore(options: RedisHealthStoreOptions): SharedHealthStore {
  return new SharedHealthStore({
    health: options.health,
    transport: redisHealthTransport(options),
    intervalMs: options.intervalMs,
    logger: options.logger,
    storeName: 'Redis',
    now: options.now,
  });
}

/** One exchange through Redis: one pipelined round trip (the scripts' first use on a connection sends them whole). */
export function redisHealthTransport(options: RedisHealthTransportOptions): HealthTransport {
  options.redis.defineCommand('switchboardHealthEject', { lua: ejectScript });
  options.redis.defineCommand('switchboardHealthRecover', { lua: recoverScript });
  return (exchange) => exchangeThroughRedis(options, exchange);
}

async function exchangeThroughRedis(
  options: RedisHealthTransportOptions,
  exchange: HealthExchange,
): Promise<HealthExchangeAnswer> {
  const { redis, windowMs, deployments } = options;
  const { now } = exchange;
  const stateKey = (deployment: string) => `${options.keyPrefix}{health}:state:${deployment}`;
  const recoveredKey = (deployment: string) => `${options.keyPrefix}{health}:recovered:${deployment}`;
  const bucketKey = (deployment: string, bucketStart: number) =>
    `${options.keyPrefix}{health}:outcomes:${deployment}:${bucketStart}`;
  const pipeline = redis.pipeline() as Pipeline;
  for (const [deployment, { kind, ejection }] of exchange.transitions) {
    const value = `${ejection.count}:${ejection.until}`;
    // Kept a window past its cooldown, so a half-open deployment stays half-open until a probe reports back.
    const ttl = ejection.until - now + windowMs;
    const keys = [stateKey(deployment), recoveredKey(deployment)];
    if (kind === 'recovered') {
      // The shared evidence that ejected it is spent too (unless another node ejected it again meanwhile).
      keys.push(...liveBucketStarts(windowMs, now).map((start) => bucketKey(deployment, start)));
      pipeline.switchboardHealthRecover(keys.length, ...keys, value, ttl);
    } else if (ttl > 0) {
      pipeline.switchboardHealthEject(keys.length, ...keys, value, ttl);
    }
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
