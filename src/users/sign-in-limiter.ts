/**
 * Slows down password guessing: failed sign-ins are counted per e-mail address and per client address in a fixed
 * window; past the limit, further attempts are refused without checking the password until the window ends. State
 * is in this process (each node counts its own; with N nodes an attacker gets N times the budget, still bounded).
 */

export interface SignInLimiterOptions {
  /** Failures allowed per e-mail address within the window; a client address gets three times as many. */
  maxFailures: number;
  windowMs: number;
  /** Upper bound on remembered subjects, so a flood of random addresses cannot exhaust memory. */
  maxEntries?: number;
}

interface Counter {
  failures: number;
  windowEndsAt: number;
}

export class SignInLimiter {
  private readonly counters = new Map<string, Counter>();
  private readonly sweepTimer: NodeJS.Timeout;
  private readonly maxEntries: number;

  constructor(private readonly options: SignInLimiterOptions) {
    this.maxEntries = options.maxEntries ?? 100_000;
    this.sweepTimer = setInterval(() => this.sweep(Date.now()), Math.min(options.windowMs, 60_000));
    this.sweepTimer.unref();
  }

  close(): void {
    clearInterval(this.sweepTimer);
  }

  private limitFor(subject: string): number {
    return subject.startsWith('ip:') ? this.options.maxFailures * 3 : this.options.maxFailures;
  }

  /** Seconds until the caller may try again, or 0 when an attempt is allowed now. */
  retryAfterSeconds(email: string, clientAddress: string, now = Date.now()): number {
    let wait = 0;
    for (const subject of [`email:${email}`, `ip:${clientAddress}`]) {
      const counter = this.counters.get(subject);
      if (counter && counter.windowEndsAt > now && counter.failures >= this.limitFor(subject)) {
        wait = Math.max(wait, Math.ceil((counter.windowEndsAt - now) / 1000));
      }
    }
    return wait;
  }

  recordFailure(email: string, clientAddress: string, now = Date.now()): void {
    for (const subject of [`email:${email}`, `ip:${clientAddress}`]) {
      const counter = this.counters.get(subject);
      if (counter && counter.windowEndsAt > now) counter.failures++;
      else {
        if (this.counters.size >= this.maxEntries) this.sweep(now);
        if (this.counters.size >= this.maxEntries) {
          // Still full of live windows: forget the oldest rather than grow without bound.
          const oldest = this.counters.keys().next().value;
          if (oldest !== undefined) this.counters.delete(oldest);
        }
        this.counters.set(subject, { failures: 1, windowEndsAt: now + this.options.windowMs });
      }
    }
  }

  /** A correct password clears the address's count (not the client's: one good login must not reset a spray). */
  recordSuccess(email: string): void {
    this.counters.delete(`email:${email}`);
  }

  private sweep(now: number): void {
    for (const [subject, counter] of this.counters) {
      if (counter.windowEndsAt <= now) this.counters.delete(subject);
    }
  }
}
