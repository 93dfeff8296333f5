import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { AdmissionRequest } from '../../src/limits/limiter.js';
import { MemoryLimiter } from '../../src/limits/memory-limiter.js';
import { noLimits } from '../../src/limits/settings.js';

/**
 * The in-process limiter forgets subjects idle for two minutes (their windows are empty by then) and reloads their
 * budgets from the request log. A subject with a request still running is not idle: its budget counts that request's
 * reservation, which the log does not know of until the request ends. A subject that never goes idle keeps the spend
 * of the current day and month only.
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

  it('keeps the spend of the current day and month only, for a subject that never goes idle', async () => {
    const periodsLoaded: string[] = [];
    const limiter = new MemoryLimiter(async (_subject, period, start) => {
      periodsLoaded.push(`${period}:${new Date(start).toISOString().slice(0, 10)}`);
      return 0;
    });
    const spendEntries = () =>
      (limiter as unknown as { subjects: Map<string, { spend: Map<string, number> }> }).subjects.get('key:1')?.spend
        .size;
    const both = {
      ...budgeted,
      subjects: [{ ...budgeted.subjects[0], limits: { ...noLimits, dailyBudgetUsd: 1, monthlyBudgetUsd: 10 } }],
    } as AdmissionRequest;
    try {
      // A request that runs through all of it keeps the subject from ever being swept as idle.
      const running = await limiter.admit(both);
      for (let day = 0; day < 100; day++) {
        (await limiter.admit(both)).settle({ tokens: 10, costUsd: 0.01 });
        expect(spendEntries()).toBeLessThanOrEqual(2);
        await vi.advanceTimersByTimeAsync(86_400_000);
      }
      // Every day's and month's spend was read from the log when its period began, once.
      expect(periodsLoaded.filter((period) => period.startsWith('day:'))).toHaveLength(100);
      expect(new Set(periodsLoaded).size).toBe(periodsLoaded.length);
      running.settle({ tokens: 10, costUsd: 0.01 });
    } finally {
      await limiter.close();
    }
  });
});
