import type { Ejection } from './deployment-health.js';
import { type AccountTally, bucketLengthMs, liveBucketStarts } from './outcome-window.js';
import type { HealthExchange, HealthExchangeAnswer } from './shared-health-store.js';

/**
 * The shared deployment health that the primary process of `serve --workers N` keeps for its workers when Redis is
 * not configured: what Redis holds between nodes (redis-health-store.ts), in memory. Each deployment's shared ejection
 * lasts a window past its cooldown; each bucket of outcomes, per account, a window past its last write. Bounded by the
 * deployments the workers report (their configured ones), the window's buckets and the accounts that sent requests
 * within it.
 */

interface Bucket {
  expiresAt: number;
  tallies: Map<string, AccountTally>;
}

export class HealthLedger {
  private readonly states = new Map<string, { ejection: Ejection; expiresAt: number }>();
  /** Per deployment, its buckets of outcomes by start time. */
  private readonly buckets = new Map<string, Map<number, Bucket>>();

  constructor(
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  exchange(exchange: HealthExchange): HealthExchangeAnswer {
    const now = this.now();
    this.forgetExpired(now);
    for (const [deployment, ejection] of exchange.transitions) {
      if (!ejection) {
        // Recovered: the shared evidence that ejected it is spent too.
        this.states.delete(deployment);
        this.buckets.delete(deployment);
        continue;
      }
      // The ejection's times are on the worker's clock, the expiry on this one's: the same machine's.
      const expiresAt = now + ejection.until - exchange.now + this.windowMs;
      if (expiresAt > now) this.states.set(deployment, { ejection, expiresAt });
    }
    const bucketTtl = this.windowMs + bucketLengthMs(this.windowMs);
    for (const { deployment, deltas } of exchange.outcomes) {
      for (const delta of deltas) {
        const bucket = this.bucketOf(deployment, delta.bucketStart);
        bucket.expiresAt = now + bucketTtl;
        const tally = bucket.tallies.get(delta.account) ?? { successes: 0, failures: 0 };
        tally.successes += delta.successes;
        tally.failures += delta.failures;
        bucket.tallies.set(delta.account, tally);
      }
    }
    const merged: Record<string, AccountTally[]> = {};
    const starts = liveBucketStarts(this.windowMs, exchange.now);
    for (const deployment of exchange.judge) {
      const tallies = new Map<string, AccountTally>();
      for (const start of starts) {
        for (const [account, tally] of this.buckets.get(deployment)?.get(start)?.tallies ?? []) {
          const sum = tallies.get(account) ?? { successes: 0, failures: 0 };
          sum.successes += tally.successes;
          sum.failures += tally.failures;
          tallies.set(account, sum);
        }
      }
      merged[deployment] = [...tallies.values()];
    }
    const states: Record<string, Ejection | null> = {};
    // Only the ejected ones: the worker reads every other deployment it has as healthy.
    if (exchange.readStates) {
      for (const [deployment, state] of this.states) states[deployment] = state.ejection;
    }
    return { merged, states };
  }

  private bucketOf(deployment: string, start: number): Bucket {
    let buckets = this.buckets.get(deployment);
    if (!buckets) {
      buckets = new Map();
      this.buckets.set(deployment, buckets);
    }
    let bucket = buckets.get(start);
    if (!bucket) {
      bucket = { expiresAt: 0, tallies: new Map() };
      buckets.set(start, bucket);
    }
    return bucket;
  }

  private forgetExpired(now: number): void {
    for (const [deployment, state] of this.states) {
      if (state.expiresAt <= now) this.states.delete(deployment);
    }
    for (const [deployment, buckets] of this.buckets) {
      for (const [start, bucket] of buckets) {
        if (bucket.expiresAt <= now) buckets.delete(start);
      }
      if (buckets.size === 0) this.buckets.delete(deployment);
    }
  }
}
