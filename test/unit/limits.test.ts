import { describe, expect, it } from 'vitest';
import { formatResetDuration, periodKeys } from '../../src/limits/limiter.js';
import { effectiveLimits, noLimits, parseStoredLimits, validateLimitChange } from '../../src/limits/settings.js';
import { SlidingWindow } from '../../src/limits/sliding-window.js';

describe('sliding window', () => {
  it('counts the last 60 seconds only', () => {
    const window = new SlidingWindow();
    window.add(1000, 5);
    window.add(1030, 3);
    expect(window.total(1030)).toBe(8);
    expect(window.total(1059)).toBe(8);
    expect(window.total(1060)).toBe(3);
    expect(window.total(1090)).toBe(0);
  });

  it('tells when enough room frees up and when it is all gone', () => {
    const window = new SlidingWindow();
    window.add(1000, 5);
    window.add(1030, 3);
    // limit 8: one more fits once second 1000's five requests leave at t=1060 s.
    expect(window.retryAfterMs(1_040_000, 1, 8)).toBe(20_000);
    expect(window.retryAfterMs(1_040_000, 6, 8)).toBe(50_000);
    expect(window.resetMs(1_040_000)).toBe(50_000);
  });

  it('settles a reservation in its own second, never below zero', () => {
    const window = new SlidingWindow();
    window.add(2000, 100);
    window.adjust(2000, -90);
    expect(window.total(2000)).toBe(10);
    window.adjust(2000, -50);
    expect(window.total(2000)).toBe(0);
    window.adjust(1999, 40);
    expect(window.total(2000)).toBe(0);
  });
});

describe('limit settings', () => {
  it('lets stored limits override defaults, and null remove them', () => {
    const defaults = { ...noLimits, requestsPerMinute: 60, dailyBudgetUsd: 5 };
    const stored = parseStoredLimits(JSON.stringify({ requestsPerMinute: 10, dailyBudgetUsd: null }));
    expect(effectiveLimits(stored, defaults)).toEqual({ ...noLimits, requestsPerMinute: 10 });
    expect(effectiveLimits({}, defaults)).toEqual(defaults);
  });

  it('validates changes, naming the field', () => {
    expect(validateLimitChange({ requestsPerMinute: 5, dailyBudgetUsd: 0.5, tokensPerMinute: null })).toEqual({
      requestsPerMinute: 5,
      dailyBudgetUsd: 0.5,
      tokensPerMinute: null,
    });
    expect(() => validateLimitChange({ requestsPerMinute: 0 })).toThrow(/requestsPerMinute must be a whole number/);
    expect(() => validateLimitChange({ requestsPerMinute: 1.5 })).toThrow(/whole number/);
    // Past 2^53 a count is not the number the operator wrote.
    expect(() => validateLimitChange({ tokensPerMinute: 1e30 })).toThrow(/tokensPerMinute must be a whole number/);
    expect(() => validateLimitChange({ concurrentRequests: 2 ** 53 })).toThrow(/concurrentRequests/);
    expect(validateLimitChange({ tokensPerMinute: Number.MAX_SAFE_INTEGER })).toEqual({
      tokensPerMinute: Number.MAX_SAFE_INTEGER,
    });
    expect(() => validateLimitChange({ dailyBudgetUsd: -1 })).toThrow(/dailyBudgetUsd/);
    expect(() => validateLimitChange({ speed: 1 })).toThrow(/unknown limit "speed"/);
  });

  it('formats reset durations like OpenAI and finds UTC periods', () => {
    expect(formatResetDuration(12)).toBe('12ms');
    expect(formatResetDuration(1500)).toBe('2s');
    expect(formatResetDuration(360_000)).toBe('6m0s');
    const periods = periodKeys(Date.UTC(2026, 11, 31, 23, 59));
    expect(periods).toMatchObject({ day: '2026-12-31', month: '2026-12' });
    expect(periods.dayEnd.toISOString()).toBe('2027-01-01T00:00:00.000Z');
    expect(periods.monthEnd.toISOString()).toBe('2027-01-01T00:00:00.000Z');
  });
});
