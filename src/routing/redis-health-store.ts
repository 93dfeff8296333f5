import type { Redis } from 'ioredis';
import type { Logger } from '../observability/logger.js';
import type { DeploymentHealth, Ejection } from './deployment-health.js';
import { type AccountTally, bucketLengthMs, liveBucketStarts, type OutcomeDelta } from './outcome-window.js';

/**
 * Shares deployment health between gateway nodes through Redis, off the request path: every `intervalMs` one
 * pipelined round trip sends this node's new outcomes (per deployment, bucket and account), writes the ejections and
 * recoveries it decided, reads back the merged window of each deployment that failed here, and reads every
 * deployment's shared ejection. Requests only ever read the local copy. An interval rather than pub/sub: an ejection
 * is not urgent to the other nodes (the node that saw the evidence acts at once, the others within an interval),
 * and a poll heals itself after a Redis outage without resubscribing. While Redis does not answer, each node judges
 * its own outcomes alone, as without Redis.
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

export class RedisHealthStore {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  /** Ejections (or recoveries: undefined) decided here and not yet written, latest per deployment. */
  private readonly outbox = new Map<string, Ejection | undefined>();
  private reachable: boolean | undefined;
  private readonly now: () => number;

  constructor(private readonly options: RedisHealthStoreOptions) {
    this.now = options.now ?? Date.now;
    options.health.onTransition((deployment, ejection) => this.outbox.set(deployment, ejection));
  }

  start(): void {
    this.timer = setInterval(() => void this.exchange(), this.options.intervalMs);
    this.timer.unref();
  }

  /** One exchange with Redis (tests call it to be sure it ran); concurrent calls share the one in flight. */
  exchange(): Promise<void> {
    this.running ??= this.exchangeOnce().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  private stateKey(deployment: string): string {
    return `${this.options.keyPrefix}{health}:state:${deployment}`;
  }

  private bucketKey(deployment: string, bucketStart: number): string {
    return `${this.options.keyPrefix}{health}:outcomes:${deployment}:${bucketStart}`;
  }

  private async exchangeOnce(): Promise<void> {
    const { health, redis, windowMs } = this.options;
    const now = this.now();
    const pipeline = redis.pipeline();
    const transitions = new Map(this.outbox);
    this.outbox.clear();
    for (const [deployment, ejection] of transitions) this.writeTransition(pipeline, deployment, ejection, now);

    const sent: Array<{ deployment: string; deltas: OutcomeDelta[] }> = [];
    const bucketTtl = windowMs + bucketLengthMs(windowMs);
    for (const [deployment, window] of health.outcomeWindows()) {
      const deltas = window.unsent(now);
      if (deltas.length === 0) continue;
      sent.push({ deployment, deltas });
      for (const delta of deltas) {
        const key = this.bucketKey(deployment, delta.bucketStart);
        if (delta.successes > 0) pipeline.hincrby(key, `s:${delta.account}`, delta.successes);
        if (delta.failures > 0) pipeline.hincrby(key, `f:${delta.account}`, delta.failures);
        pipeline.pexpire(key, bucketTtl);
      }
    }
    const toJudge = health.takeToJudge();
    const bucketStarts = liveBucketStarts(windowMs, now);
    const firstWindowRead = pipeline.length;
    for (const deployment of toJudge) {
      for (const start of bucketStarts) pipeline.hgetall(this.bucketKey(deployment, start));
    }
    const deployments = this.options.deployments;
    if (deployments.length > 0) pipeline.mget(...deployments.map((deployment) => this.stateKey(deployment)));

    let results: Array<[Error | null, unknown]> | null;
    try {
      results = await pipeline.exec();
      const failure = results?.find(([error]) => error !== null)?.[0];
      if (!results || failure) throw failure ?? new Error('the pipeline was not run');
    } catch (error) {
      // Nothing was certainly written: send it all again next time; meanwhile every node judges on its own.
      for (const [deployment, ejection] of transitions) {
        if (!this.outbox.has(deployment)) this.outbox.set(deployment, ejection);
      }
      this.setReachable(false, error);
      health.judgeOwnWindows(toJudge);
      return;
    }
    for (const { deployment, deltas } of sent) health.outcomeWindows().get(deployment)?.markSent(deltas);

    const merged = new Map<string, AccountTally[]>();
    toJudge.forEach((deployment, index) => {
      const tallies = new Map<string, AccountTally>();
      for (let bucket = 0; bucket < bucketStarts.length; bucket++) {
        const entry = results?.[firstWindowRead + index * bucketStarts.length + bucket];
        addHash(tallies, (entry?.[1] ?? {}) as Record<string, string>);
      }
      merged.set(deployment, [...tallies.values()]);
    });
    const states = new Map<string, Ejection | undefined>();
    if (deployments.length > 0) {
      const values = (results.at(-1)?.[1] ?? []) as Array<string | null>;
      deployments.forEach((deployment, index) => {
        states.set(deployment, parseEjection(values[index] ?? null));
      });
    }
    this.setReachable(true);
    health.adoptShared(states, merged, new Set(this.outbox.keys()));
    // Ejections decided on the merged windows just now reach the other nodes without waiting an interval.
    if (this.outbox.size > 0) await this.flushTransitions();
  }

  private async flushTransitions(): Promise<void> {
    const pipeline = this.options.redis.pipeline();
    const transitions = new Map(this.outbox);
    this.outbox.clear();
    const now = this.now();
    for (const [deployment, ejection] of transitions) this.writeTransition(pipeline, deployment, ejection, now);
    try {
      const results = await pipeline.exec();
      const failure = results?.find(([error]) => error !== null)?.[0];
      if (failure) throw failure;
    } catch (error) {
      for (const [deployment, ejection] of transitions) {
        if (!this.outbox.has(deployment)) this.outbox.set(deployment, ejection);
      }
      this.setReachable(false, error);
    }
  }

  private writeTransition(pipeline: Pipeline, deployment: string, ejection: Ejection | undefined, now: number): void {
    if (!ejection) {
      // Recovered: the shared evidence that ejected it is spent too.
      const keys = liveBucketStarts(this.options.windowMs, now).map((start) => this.bucketKey(deployment, start));
      pipeline.del(this.stateKey(deployment), ...keys);
      return;
    }
    // Kept a window past its cooldown, so a half-open deployment stays half-open until a probe reports back.
    const ttl = ejection.until - now + this.options.windowMs;
    if (ttl > 0) pipeline.set(this.stateKey(deployment), `${ejection.count}:${ejection.until}`, 'PX', ttl);
  }

  private setReachable(reachable: boolean, error?: unknown): void {
    this.options.health.setShared(reachable);
    if (this.reachable === reachable) return;
    const first = this.reachable === undefined;
    this.reachable = reachable;
    if (!reachable) {
      this.options.logger.warn(
        { err: error },
        'deployment health: Redis does not answer; each node judges its own outcomes until it does',
      );
    } else if (!first) {
      this.options.logger.info('deployment health: shared through Redis again');
    }
  }
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

function parseEjection(value: string | null): Ejection | undefined {
  if (value === null) return undefined;
  const [count, until] = value.split(':').map(Number);
  if (count === undefined || until === undefined || !Number.isFinite(count) || !Number.isFinite(until))
    return undefined;
  return { count, until };
}
