import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { AdmissionRequest } from '../../src/limits/limiter.js';
import { MemoryLimiter } from '../../src/limits/memory-limiter.js';
import { noLimits } from '../../src/limits/settings.js';

/**
 * The in-process limiter forgets subjects idle for two minutes (their windows are empty by then) and reloads their
 * budgets from the request log. A subject with a request still running is not idle: its budget counts that request's
 * reservation, which the log does not know of until the request ends.
 */

beforeEach(() => {
  vi.useFakeTimers({ now: Date.UTC(2026, 10, 27, 12) });
});
afterEach(() => {
  vi.useRealTimers();
});

/** A request of a key with a $1 daily budget and no other limit, estimated at $0.60. */
const budgeted: AdmissionRequest = {
  partition: 'account-1',
  subjects: [{ id: 'key:1', label: 'key "budgeted"', limits: { ...noLimits, dailyBudgetUsd: 1 } }],
  estimatedTokens: 100,
  estimatedCostUsd: 0.6,
};

describe('memory limiter', () => {
  it('keeps counting the reservation of a request that runs longer than the idle sweep', async () => {
    // The log knows of nothing spent yet: the one request admitted is still running.
    const limiter = new MemoryLimiter(async () => 0);
    try {
      const longStream = await limiter.admit(budgeted);
      // Three minutes later (the sweep ran twice), the long request is still streaming.
      await vi.advanceTimersByTimeAsync(180_000);
      // $0.60 counted: one more may start (the last one admitted may take spending past the budget)...
      const second = await limiter.admit(budgeted);
      // ...but with $1.20 counted, no third.
      await expect(limiter.admit(budgeted)).rejects.toMatchObject({ type: 'insufficient_quota' });
      longStream.settle({ tokens: 100, costUsd: 0.6 });
      second.settle({ tokens: 100, costUsd: 0.6 });
      await expect(limiter.admit(budgeted)).rejects.toMatchObject({ type: 'insufficient_quota' });
    } finally {
      await limiter.close();
    }
  });

  it('still forgets subjects with nothing running', async () => {
    let loads = 0;
    const limiter = new MemoryLimiter(async () => {
      loads++;
      return 0;
    });
    try {
      (await limiter.admit(budgeted)).settle({ tokens: 10, costUsd: 0.01 });
      await vi.advanceTimersByTimeAsync(180_000);
      (await limiter.admit(budgeted)).settle({ tokens: 10, costUsd: 0.01 });
      // Swept while idle: the budget was read from the log again.
      expect(loads).toBe(2);
    } finally {
      await limiter.close();
    }
  });
});
