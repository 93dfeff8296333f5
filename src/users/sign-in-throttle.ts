import type { Config } from '../config/schema.js';

/**
 * Slows down password guessing without letting anyone lock a user out. Failed sign-ins are counted per (client
 * address, user): the first `freeFailures` are answered at once, then each further attempt from that client for that
 * user must wait twice as long as the one before (1 s, 2 s, 4 s, … up to maxDelayMs) after the last failure; an
 * attempt made sooner is answered 429 without the password being checked. A client guessing at many users is counted
 * as well (three times the free failures, then the same growing delays). Nothing is counted per user alone: the right
 * password from another address is never refused because someone else guessed wrong. A correct password clears its
 * (client, user) count, not the client's (one good sign-in must not reset a spray).
 *
 * An attempt is counted as a failure when it begins, before its password is checked, and uncounted if the password
 * was right: counted only once it had failed, guesses sent all at once would all be checked (checking takes a while,
 * and none would have failed yet when the others asked).
 */

export interface SignInThrottlePolicy {
  /** Failures per (client address, user) answered without delay. */
  freeFailures: number;
  /** The longest wait between two attempts. */
  maxDelayMs: number;
  /** A count is forgotten this long after its last failure. */
  forgetAfterMs: number;
}

/** What is kept per subject. */
export interface FailureRecord {
  failures: number;
  lastFailureAt: number;
}

export interface SignInThrottle {
  /**
   * Before a password is checked: 0 when this client may try this user now (the attempt is then counted as a failure
   * until attemptSucceeded says otherwise), else the seconds to wait (nothing is counted).
   */
  beginAttempt(email: string, clientAddress: string): Promise<number>;
  /** The attempt's password was right: its (client, user) count is cleared, and the attempt uncounted for the client. */
  attemptSucceeded(email: string, clientAddress: string): Promise<void>;
  /** The attempt ended on another error before its password was judged: uncounted for both subjects. */
  withdrawAttempt(email: string, clientAddress: string): Promise<void>;
  close(): void;
}

/** The two subjects an attempt counts against, with the failures each may have before delays start. */
export function subjectsOf(email: string, clientAddress: string, policy: SignInThrottlePolicy) {
  return [
    { key: `pair:${clientAddress}\u0000${email}`, free: policy.freeFailures },
    { key: `client:${clientAddress}`, free: policy.freeFailures * 3 },
  ];
}

/** Milliseconds still to wait after `record`, given the failures allowed before delays start. */
export function remainingWaitMs(
  record: FailureRecord | undefined,
  free: number,
  policy: SignInThrottlePolicy,
  now: number,
): number {
  if (!record || record.failures < free || now - record.lastFailureAt >= policy.forgetAfterMs) return 0;
  // 2^30 s is far beyond any configured maximum; the exponent is capped so the number stays finite.
  const delay = Math.min(1000 * 2 ** Math.min(record.failures - free, 30), policy.maxDelayMs);
  return Math.max(0, record.lastFailureAt + delay - now);
}

/** The in-process throttle: one node's counts (the Redis one shares them, and keeps this one as its fallback). */
export class MemorySignInThrottle implements SignInThrottle {
  private readonly records = new Map<string, FailureRecord>();
  private readonly sweepTimer: NodeJS.Timeout;
  private readonly maxEntries: number;
  private readonly now: () => number;

  constructor(
    private readonly policy: SignInThrottlePolicy,
    options: { maxEntries?: number; now?: () => number } = {},
  ) {
    // Bounded, so a flood of random addresses cannot exhaust memory.
    this.maxEntries = options.maxEntries ?? 100_000;
    // Read when called, not captured, so that a test's fake Date reaches it.
    this.now = options.now ?? (() => Date.now());
    this.sweepTimer = setInterval(() => this.sweep(), Math.min(policy.forgetAfterMs, 60_000));
    this.sweepTimer.unref();
  }

  close(): void {
    clearInterval(this.sweepTimer);
  }

  waitMs(email: string, clientAddress: string): number {
    const now = this.now();
    let wait = 0;
    for (const subject of subjectsOf(email, clientAddress, this.policy)) {
      wait = Math.max(wait, remainingWaitMs(this.records.get(subject.key), subject.free, this.policy, now));
    }
    return wait;
  }

  async beginAttempt(email: string, clientAddress: string): Promise<number> {
    // No await between the check and the count: attempts arriving together are counted one after the other.
    const wait = this.waitMs(email, clientAddress);
    if (wait > 0) return Math.ceil(wait / 1000);
    this.countFailure(email, clientAddress);
    return 0;
  }

  /** Counts a failed attempt of this client for this user (the Redis throttle mirrors its counts here). */
  countFailure(email: string, clientAddress: string): void {
    const now = this.now();
    for (const subject of subjectsOf(email, clientAddress, this.policy)) {
      const record = this.records.get(subject.key);
      if (record && now - record.lastFailureAt < this.policy.forgetAfterMs) {
        record.failures++;
        record.lastFailureAt = now;
        continue;
      }
      if (this.records.size >= this.maxEntries) this.sweep();
      if (this.records.size >= this.maxEntries) {
        // Still full of live records: forget the oldest rather than grow without bound.
        const oldest = this.records.keys().next().value;
        if (oldest !== undefined) this.records.delete(oldest);
      }
      this.records.set(subject.key, { failures: 1, lastFailureAt: now });
    }
  }

  async attemptSucceeded(email: string, clientAddress: string): Promise<void> {
    const [pair, client] = subjectsOf(email, clientAddress, this.policy);
    if (pair) this.records.delete(pair.key);
    const record = client && this.records.get(client.key);
    if (record) record.failures = Math.max(0, record.failures - 1);
  }

  async withdrawAttempt(email: string, clientAddress: string): Promise<void> {
    for (const subject of subjectsOf(email, clientAddress, this.policy)) {
      const record = this.records.get(subject.key);
      if (record) record.failures = Math.max(0, record.failures - 1);
    }
  }

  private sweep(): void {
    const now = this.now();
    for (const [key, record] of this.records) {
      if (now - record.lastFailureAt >= this.policy.forgetAfterMs) this.records.delete(key);
    }
  }
}

/** The throttle's policy as configured (`console.sign_in_*`). */
export function signInThrottlePolicy(config: Config): SignInThrottlePolicy {
  return {
    freeFailures: config.console.signInMaxFailures,
    maxDelayMs: config.console.signInMaxDelayMs,
    forgetAfterMs: config.console.signInWindowMs,
  };
}
