import { describe, expect, it } from 'vitest';
import { costOf, estimateUsage, readUsage, toTwelveDigits } from '../../src/usage/usage.js';

const pricing = {
  inputPerMillion: 2.5,
  outputPerMillion: 10,
  cachedInputPerMillion: 1.25,
  cacheWritePerMillion: 2.5,
  reasoningPerMillion: 10,
};

describe('usage and cost', () => {
  it.each([
    { prompt_tokens: -5, completion_tokens: 3 },
    { prompt_tokens: 5, completion_tokens: 1.5 },
    { prompt_tokens: 5, completion_tokens: 3, total_tokens: 1e308 },
    { prompt_tokens: 5, completion_tokens: 3, total_tokens: 'NaN' },
    { prompt_tokens: 5, completion_tokens: 3, prompt_tokens_details: { cached_tokens: -1 } },
    { prompt_tokens: 5, completion_tokens: 3, completion_tokens_details: { audio_tokens: 0.5 } },
    { prompt_tokens: 5, completion_tokens: 3, prompt_tokens_details: 'none' },
  ])('reads no usage (unknown, so estimated) from counts that cannot be believed: %j', (usage) => {
    expect(readUsage(usage as never)).toBeUndefined();
  });

  it('reads absent and null counts as zero', () => {
    expect(
      readUsage({ prompt_tokens: 5, completion_tokens: null, prompt_tokens_details: null } as never),
    ).toMatchObject({ promptTokens: 5, completionTokens: 0, totalTokens: 5, cachedTokens: 0, estimated: false });
  });

  it('reads OpenAI usage including cached and reasoning tokens', () => {
    expect(
      readUsage({
        prompt_tokens: 1000,
        completion_tokens: 500,
        total_tokens: 1500,
        prompt_tokens_details: { cached_tokens: 400 },
        completion_tokens_details: { reasoning_tokens: 200 },
      }),
    ).toEqual({
      promptTokens: 1000,
      completionTokens: 500,
      totalTokens: 1500,
      cachedTokens: 400,
      cacheWriteTokens: 0,
      reasoningTokens: 200,
      estimated: false,
    });
    expect(readUsage(null)).toBeUndefined();
  });

  it('prices cached input and reasoning separately (they are inside prompt and completion counts)', () => {
    const usage = readUsage({
      prompt_tokens: 1_000_000,
      completion_tokens: 1_000_000,
      total_tokens: 2_000_000,
      prompt_tokens_details: { cached_tokens: 400_000 },
      completion_tokens_details: { reasoning_tokens: 0 },
    });
    if (!usage) throw new Error('usage expected');
    // 600k * 2.5 + 400k * 1.25 + 1M * 10 = 1.5 + 0.5 + 10
    expect(costOf(usage, pricing)).toBe(12);
    expect(costOf(usage, { ...pricing, reasoningPerMillion: 60 })).toBe(12);
    expect(costOf({ ...usage, reasoningTokens: 500_000 }, { ...pricing, reasoningPerMillion: 60 })).toBe(12 + 0.5 * 50);
    expect(costOf(usage, undefined)).toBeNull();
  });

  it('never estimates a request as zero tokens', () => {
    const estimate = estimateUsage(0, 0);
    expect(estimate.promptTokens).toBeGreaterThan(0);
    expect(estimate.estimated).toBe(true);
    expect(estimateUsage(400, 40)).toMatchObject({ promptTokens: 100, completionTokens: 10, totalTokens: 110 });
  });
});

describe('toTwelveDigits (the rounding of every cost)', () => {
  it('drops floating-point noise and agrees with Number(x.toPrecision(12)) for costs of every size', () => {
    expect(toTwelveDigits(0.1 + 0.2)).toBe(0.3);
    expect(toTwelveDigits(-(0.1 + 0.2))).toBe(-0.3);
    expect(toTwelveDigits(0)).toBe(0);
    expect(toTwelveDigits(12)).toBe(12);
    expect(toTwelveDigits(Number.NaN)).toBeNaN();
    const prices = [0.075, 0.1, 0.15, 0.4, 0.6, 1.25, 2.5, 3, 10, 15, 60];
    let seed = 7;
    const next = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed / 2_147_483_648;
    };
    for (let draw = 0; draw < 20_000; draw++) {
      const tokens = Math.floor(10 ** (next() * 7));
      const price = prices[draw % prices.length] as number;
      const dollars = (tokens * price + Math.floor(next() * 1000) * 0.3) / 1_000_000;
      expect(toTwelveDigits(dollars)).toBe(Number(dollars.toPrecision(12)));
    }
    // Outside the range of exact powers of ten: the string round trip.
    expect(toTwelveDigits(1.234567890123456e-20)).toBe(1.23456789012e-20);
    expect(toTwelveDigits(123_456_789_012_345.6)).toBe(123_456_789_012_000);
  });
});
