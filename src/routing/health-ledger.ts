import { type Ejection, sameEjection } from './deployment-health.js';
import { type AccountTally, bucketLengthMs, liveBucketStarts } from './outcome-window.js';
import type { HealthExchange, HealthExchangeAnswer } from './shared-health-store.js';

/**
 * The shared deployment health that the primary process of `serve --workers N` keeps for its workers when Redis is
 * not configured: what Redis holds between nodes (redis-health-store.ts), in memory. Each deployment's shared ejection
 * lasts a window past its cooldown; each bucket of outcomes, per account, a window past its last write. Bounded by the
 * deployments the workers report (their configured ones), the window's buckets and the accounts that sent requests
 * within it. A recovery clears the ejection it recovered from only, and that ejection is not taken back in if it
 * arrives again later (as redis-health-scripts.ts does in Redis).
 */

interface TimedEjection {
  ejection: Ejection;
  expiresAt: number;
}

interface Bucket {
  expiresAt: number;
  tallies: Map<string, AccountTally>;
}

export class HealthLedger {
  private readonly states = new Map<string, TimedEjection>();
  /** Per deployment, the ejection it last recovered from, kept as long as that ejection's shared state would be. */
  private readonly recovered = new Map<string, TimedEjection>();
  /** Per deployment, its buckets of outcomes by start time. */
  private readonly buckets = new Map<string, Map<number, Bucket>>();

  constructor(
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  exchange(exchange: HealthExchange): HealthExchangeAnswer {
    const now = this.now();
    this.forgetExpired(now);
    for (const [deployment, { kind, ejection }] of exchange.transitions) {
      // The ejection's times are on the worker's clock, the expiry on this one's: the same machine's.
      const expiresAt = now + ejection.until - exchange.now + this.windowMs;
      if (kind === 'recovered') {
        this.recover(deployment, { ejection, expiresAt }, now);
        continue;
      }
      // An ejection already recovered from arrives late only when sent again (its first exchange's answer was lost).
      if (expiresAt > now && !sameEjection(this.recovered.get(deployment)?.ejection, ejection)) {
        this.states.set(deployment, { ejection, expiresAt });
      }
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

  private recover(deployment: string, recovered: TimedEjection, now: number): void {
    if (recovered.expiresAt > now) this.recovered.set(deployment, recovered);
    const stored = this.states.get(deployment);
    // Another worker ejected it again meanwhile: that ejection stays, and so do the outcomes that are its evidence.
    if (stored && !sameEjection(stored.ejection, recovered.ejection)) return;
    // The shared evidence that ejected it is spent too.
    this.states.delete(deployment);
    this.buckets.delete(deployment);
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
    for (const timed of [this.states, this.recovered]) {
      for (const [deployment, state] of timed) {
        if (state.expiresAt <= now) timed.delete(deployment);
      }
    }
    for (const [deployment, buckets] of this.buckets) {
      for (const [start, bucket] of buckets) {
        if (bucket.expiresAt <= now) buckets.delete(start);
      }
      if (buckets.size === 0) this.buckets.delete(deployment);
    }
  }
}
