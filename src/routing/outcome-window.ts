/**
 * The outcomes of one deployment's requests over a sliding window, per account: the evidence the outlier detector
 * judges. Buckets start at multiples of the bucket length, so every node of a cluster names the same bucket alike
 * (the Redis health store keeps one hash per bucket). What has already been sent to the other nodes is remembered
 * per bucket and account, so only the difference travels.
 */

export interface AccountTally {
  successes: number;
  failures: number;
}

/** Outcomes of one account in one bucket not yet sent to the other nodes. */
export interface OutcomeDelta {
  bucketStart: number;
  account: string;
  successes: number;
  failures: number;
}

interface Counter extends AccountTally {
  sentSuccesses: number;
  sentFailures: number;
}

/** The window is this many buckets long (the current one included), so it slides in steps of a sixth. */
export const bucketsPerWindow = 6;

export function bucketLengthMs(windowMs: number): number {
  return Math.max(1, Math.ceil(windowMs / bucketsPerWindow));
}

/** Start times of the buckets inside the window at `now`, oldest first. */
export function liveBucketStarts(windowMs: number, now: number): number[] {
  const length = bucketLengthMs(windowMs);
  const current = now - (now % length);
  const starts: number[] = [];
  for (let index = bucketsPerWindow - 1; index >= 0; index--) starts.push(current - index * length);
  return starts;
}

export class OutcomeWindow {
  private readonly bucketMs: number;
  private readonly starts: number[] = new Array(bucketsPerWindow).fill(-1);
  private readonly buckets: Map<string, Counter>[] = Array.from({ length: bucketsPerWindow }, () => new Map());

  constructor(windowMs: number) {
    this.bucketMs = bucketLengthMs(windowMs);
  }

  add(now: number, account: string, failed: boolean): void {
    const start = now - (now % this.bucketMs);
    const slot = Math.floor(start / this.bucketMs) % bucketsPerWindow;
    const bucket = this.buckets[slot] as Map<string, Counter>;
    if (this.starts[slot] !== start) {
      // The slot held a bucket that has left the window.
      this.starts[slot] = start;
      bucket.clear();
    }
    let counter = bucket.get(account);
    if (!counter) {
      counter = { successes: 0, failures: 0, sentSuccesses: 0, sentFailures: 0 };
      bucket.set(account, counter);
    }
    if (failed) counter.failures++;
    else counter.successes++;
  }

  /** Every account's outcomes inside the window at `now`. */
  tallies(now: number): Map<string, AccountTally> {
    const oldest = now - (now % this.bucketMs) - (bucketsPerWindow - 1) * this.bucketMs;
    const merged = new Map<string, AccountTally>();
    for (let slot = 0; slot < bucketsPerWindow; slot++) {
      if ((this.starts[slot] as number) < oldest) continue;
      for (const [account, counter] of this.buckets[slot] as Map<string, Counter>) {
        const tally = merged.get(account);
        if (tally) {
          tally.successes += counter.successes;
          tally.failures += counter.failures;
        } else {
          merged.set(account, { successes: counter.successes, failures: counter.failures });
        }
      }
    }
    return merged;
  }

  /** Outcomes inside the window not yet sent to the other nodes. */
  unsent(now: number): OutcomeDelta[] {
    const oldest = now - (now % this.bucketMs) - (bucketsPerWindow - 1) * this.bucketMs;
    const deltas: OutcomeDelta[] = [];
    for (let slot = 0; slot < bucketsPerWindow; slot++) {
      const bucketStart = this.starts[slot] as number;
      if (bucketStart < oldest) continue;
      for (const [account, counter] of this.buckets[slot] as Map<string, Counter>) {
        const successes = counter.successes - counter.sentSuccesses;
        const failures = counter.failures - counter.sentFailures;
        if (successes > 0 || failures > 0) deltas.push({ bucketStart, account, successes, failures });
      }
    }
    return deltas;
  }

  /** Marks deltas as delivered; a bucket that has been reused since is left alone. */
  markSent(deltas: readonly OutcomeDelta[]): void {
    for (const delta of deltas) {
      const slot = Math.floor(delta.bucketStart / this.bucketMs) % bucketsPerWindow;
      if (this.starts[slot] !== delta.bucketStart) continue;
      const counter = (this.buckets[slot] as Map<string, Counter>).get(delta.account);
      if (!counter) continue;
      counter.sentSuccesses += delta.successes;
      counter.sentFailures += delta.failures;
    }
  }

  clear(): void {
    for (let slot = 0; slot < bucketsPerWindow; slot++) {
      this.starts[slot] = -1;
      (this.buckets[slot] as Map<string, Counter>).clear();
    }
  }
}
