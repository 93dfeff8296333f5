import {
  type Admission,
  type AdmissionRequest,
  admittedWithoutLimits,
  type Limiter,
  type LimitSubject,
  periodKeys,
  quotaError,
  rateLimitError,
  rateLimitHeaders,
  requestTooLargeForLimit,
  tighter,
  toMicroDollars,
  type WindowState,
} from './limiter.js';
import { hasAnyLimit } from './settings.js';
import { SlidingWindow } from './sliding-window.js';

/**
 * Limits kept in this process: exact for a single node (and the fallback for rate limits when Redis is away).
 * Budgets start from what the request log already says was spent in the period, so a restart does not reset them.
 */

export type SpendLoader = (subject: LimitSubject, period: 'day' | 'month', periodStart: number) => Promise<number>;

interface SubjectState {
  requests: SlidingWindow;
  tokens: SlidingWindow;
  active: number;
  /**
   * Requests admitted and not settled, whatever the limits: a subject with one running is never swept, since its
   * budget counts the request's reservation and the log (what a swept subject is reloaded from) does not have it yet.
   */
  running: number;
  /** Micro-dollars spent (including estimates of requests in flight) per period key. */
  spend: Map<string, number>;
  lastUsedAt: number;
}

/**
 * Drops the spend of days and months that are over: a subject that never goes idle (never swept) would otherwise keep
 * one entry per period for ever. A request admitted in a period that is over settles into nothing then (no longer read).
 */
function forgetPastPeriods(spend: Map<string, number>, periods: ReturnType<typeof periodKeys>): void {
  for (const key of spend.keys())
    if (key !== `day:${periods.day}` && key !== `month:${periods.month}`) spend.delete(key);
}

export class MemoryLimiter implements Limiter {
  private readonly subjects = new Map<string, SubjectState>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly loadSpend: SpendLoader) {
    // Forget subjects idle for two minutes (their windows are empty); budgets are reloaded from the log if needed.
    this.sweeper = setInterval(() => this.sweep(), 60_000);
    this.sweeper.unref();
  }

  private state(id: string, now: number): SubjectState {
    let state = this.subjects.get(id);
    if (!state) {
      state = {
        requests: new SlidingWindow(),
        tokens: new SlidingWindow(),
        active: 0,
        running: 0,
        spend: new Map(),
        lastUsedAt: now,
      };
      this.subjects.set(id, state);
    }
    state.lastUsedAt = now;
    return state;
  }

  private sweep(): void {
    const cutoff = Date.now() - 120_000;
    for (const [id, state] of this.subjects)
      if (state.running === 0 && state.lastUsedAt < cutoff) this.subjects.delete(id);
  }

  async admit(request: AdmissionRequest): Promise<Admission> {
    const limited = request.subjects.filter((subject) => hasAnyLimit(subject.limits));
    if (limited.length === 0) return admittedWithoutLimits;
    const periods = periodKeys(Date.now());
    // Budgets of a new period are loaded first, so that the check-and-commit below runs without awaiting.
    for (const subject of limited) {
      const state = this.state(subject.id, Date.now());
      forgetPastPeriods(state.spend, periods);
      if (subject.limits.dailyBudgetUsd !== null && !state.spend.has(`day:${periods.day}`)) {
        const spent = await this.loadSpend(subject, 'day', periods.dayEnd.getTime() - 86_400_000);
        if (!state.spend.has(`day:${periods.day}`)) state.spend.set(`day:${periods.day}`, toMicroDollars(spent));
      }
      if (subject.limits.monthlyBudgetUsd !== null && !state.spend.has(`month:${periods.month}`)) {
        const monthStart = Date.UTC(periods.monthEnd.getUTCFullYear(), periods.monthEnd.getUTCMonth() - 1, 1);
        const spent = await this.loadSpend(subject, 'month', monthStart);
        if (!state.spend.has(`month:${periods.month}`))
          state.spend.set(`month:${periods.month}`, toMicroDollars(spent));
      }
    }
    const nowMs = Date.now();
    const nowSecond = Math.floor(nowMs / 1000);
    const tokens = Math.max(0, Math.round(request.estimatedTokens));
    const cost = toMicroDollars(request.estimatedCostUsd);
    let requestsState: WindowState | undefined;
    let tokensState: WindowState | undefined;

    for (const subject of limited) {
      const state = this.state(subject.id, nowMs);
      const { requestsPerMinute, tokensPerMinute, concurrentRequests, dailyBudgetUsd, monthlyBudgetUsd } =
        subject.limits;
      if (requestsPerMinute !== null) {
        const used = state.requests.total(nowSecond);
        const window = {
          limit: requestsPerMinute,
          remaining: requestsPerMinute - used,
          resetMs: state.requests.resetMs(nowMs),
        };
        if (used + 1 > requestsPerMinute) {
          throw rateLimitError(
            'requests',
            subject,
            requestsPerMinute,
            state.requests.retryAfterMs(nowMs, 1, requestsPerMinute),
            rateLimitHeaders(window, undefined),
          );
        }
      }
      if (tokensPerMinute !== null) {
        const used = state.tokens.total(nowSecond);
        const window = {
          limit: tokensPerMinute,
          remaining: tokensPerMinute - used,
          resetMs: state.tokens.resetMs(nowMs),
        };
        if (tokens > tokensPerMinute)
          throw requestTooLargeForLimit(subject, tokensPerMinute, tokens, rateLimitHeaders(undefined, window));
        if (used + tokens > tokensPerMinute) {
          throw rateLimitError(
            'tokens',
            subject,
            tokensPerMinute,
            state.tokens.retryAfterMs(nowMs, tokens, tokensPerMinute),
            rateLimitHeaders(undefined, window),
            tokens,
          );
        }
      }
      if (concurrentRequests !== null && state.active >= concurrentRequests) {
        throw rateLimitError('concurrency', subject, concurrentRequests, 1000, {});
      }
      if (dailyBudgetUsd !== null && (state.spend.get(`day:${periods.day}`) ?? 0) >= toMicroDollars(dailyBudgetUsd)) {
        throw quotaError('daily_budget', subject, dailyBudgetUsd, periods.dayEnd);
      }
      if (
        monthlyBudgetUsd !== null &&
        (state.spend.get(`month:${periods.month}`) ?? 0) >= toMicroDollars(monthlyBudgetUsd)
      ) {
        throw quotaError('monthly_budget', subject, monthlyBudgetUsd, periods.monthEnd);
      }
    }

    // Every check passed for every subject: commit the reservation everywhere.
    for (const subject of limited) {
      const state = this.state(subject.id, nowMs);
      const limits = subject.limits;
      if (limits.requestsPerMinute !== null) {
        state.requests.add(nowSecond, 1);
        requestsState = tighter(requestsState, {
          limit: limits.requestsPerMinute,
          remaining: limits.requestsPerMinute - state.requests.total(nowSecond),
          resetMs: state.requests.resetMs(nowMs),
        });
      }
      if (limits.tokensPerMinute !== null) {
        state.tokens.add(nowSecond, tokens);
        tokensState = tighter(tokensState, {
          limit: limits.tokensPerMinute,
          remaining: limits.tokensPerMinute - state.tokens.total(nowSecond),
          resetMs: state.tokens.resetMs(nowMs),
        });
      }
      state.running++;
      if (limits.concurrentRequests !== null) state.active++;
      if (limits.dailyBudgetUsd !== null)
        state.spend.set(`day:${periods.day}`, (state.spend.get(`day:${periods.day}`) ?? 0) + cost);
      if (limits.monthlyBudgetUsd !== null) {
        state.spend.set(`month:${periods.month}`, (state.spend.get(`month:${periods.month}`) ?? 0) + cost);
      }
    }

    let settled = false;
    return {
      headers: rateLimitHeaders(requestsState, tokensState),
      settle: (actual) => {
        if (settled) return;
        settled = true;
        const tokenDelta = Math.max(0, Math.round(actual.tokens)) - tokens;
        const costDelta = toMicroDollars(actual.costUsd) - cost;
        for (const subject of limited) {
          const state = this.state(subject.id, Date.now());
          const limits = subject.limits;
          if (limits.tokensPerMinute !== null && tokenDelta !== 0) state.tokens.adjust(nowSecond, tokenDelta);
          state.running = Math.max(0, state.running - 1);
          if (limits.concurrentRequests !== null) state.active = Math.max(0, state.active - 1);
          for (const [enabled, key] of [
            [limits.dailyBudgetUsd !== null, `day:${periods.day}`],
            [limits.monthlyBudgetUsd !== null, `month:${periods.month}`],
          ] as const) {
            if (enabled && state.spend.has(key))
              state.spend.set(key, Math.max(0, (state.spend.get(key) ?? 0) + costDelta));
          }
        }
      },
    };
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
  }
}
