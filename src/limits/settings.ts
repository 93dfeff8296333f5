import { z } from 'zod';
import { apiError } from '../errors/api-error.js';

/**
 * The limits an account or a key can have. `null` or absent means "no limit of this kind". Requests and tokens
 * are counted over a sliding 60-second window; budgets over UTC calendar days and months, in US dollars.
 */
export interface LimitSettings {
  requestsPerMinute: number | null;
  tokensPerMinute: number | null;
  concurrentRequests: number | null;
  dailyBudgetUsd: number | null;
  monthlyBudgetUsd: number | null;
}

export const noLimits: LimitSettings = Object.freeze({
  requestsPerMinute: null,
  tokensPerMinute: null,
  concurrentRequests: null,
  dailyBudgetUsd: null,
  monthlyBudgetUsd: null,
});

export const limitFields = [
  'requestsPerMinute',
  'tokensPerMinute',
  'concurrentRequests',
  'dailyBudgetUsd',
  'monthlyBudgetUsd',
] as const satisfies ReadonlyArray<keyof LimitSettings>;

const count = z.number().int().min(1).nullable().optional();
const dollars = z.number().min(0).nullable().optional();

/** The YAML form (snake_case), used for config defaults. */
export const limitSettingsSchema = z
  .strictObject({
    requests_per_minute: count,
    tokens_per_minute: count,
    concurrent_requests: count,
    daily_budget_usd: dollars,
    monthly_budget_usd: dollars,
  })
  .transform(
    (limits): LimitSettings => ({
      requestsPerMinute: limits.requests_per_minute ?? null,
      tokensPerMinute: limits.tokens_per_minute ?? null,
      concurrentRequests: limits.concurrent_requests ?? null,
      dailyBudgetUsd: limits.daily_budget_usd ?? null,
      monthlyBudgetUsd: limits.monthly_budget_usd ?? null,
    }),
  );

/** What is stored per account or key: only the fields set there (the rest fall back to configured defaults). */
export type StoredLimits = Partial<LimitSettings>;

export function parseStoredLimits(text: string | null): StoredLimits {
  if (!text) return {};
  try {
    const value = JSON.parse(text) as Record<string, unknown>;
    const result: StoredLimits = {};
    for (const field of limitFields) {
      const item = value[field];
      if (item === null || (typeof item === 'number' && Number.isFinite(item))) result[field] = item;
    }
    return result;
  } catch {
    return {};
  }
}

/** Stored values win; a stored `null` explicitly removes a default limit. */
export function effectiveLimits(stored: StoredLimits, defaults: LimitSettings): LimitSettings {
  const result = { ...defaults };
  for (const field of limitFields) {
    if (stored[field] !== undefined) result[field] = stored[field] ?? null;
  }
  return result;
}

export function hasAnyLimit(limits: LimitSettings): boolean {
  return limitFields.some((field) => limits[field] !== null);
}

/**
 * Validates a change given by an operator (CLI or management API): whole numbers ≥ 1 for counts (exact ones: past
 * 2^53 a count is rounded), dollars ≥ 0 for budgets, `null` to remove a limit. Throws a 400 naming the field.
 */
export function validateLimitChange(change: Record<string, unknown>): StoredLimits {
  const result: StoredLimits = {};
  for (const [field, value] of Object.entries(change)) {
    if (!(limitFields as readonly string[]).includes(field)) {
      throw apiError('invalid_request', `unknown limit "${field}"; limits are ${limitFields.join(', ')}`, {
        param: field,
      });
    }
    if (value === undefined) continue;
    if (value === null) {
      result[field as keyof LimitSettings] = null;
      continue;
    }
    const isBudget = field.endsWith('BudgetUsd');
    if (
      typeof value !== 'number' ||
      !Number.isFinite(value) ||
      value < 0 ||
      (!isBudget && (!Number.isSafeInteger(value) || value < 1))
    ) {
      throw apiError(
        'invalid_request',
        isBudget
          ? `${field} must be a number of dollars, 0 or more`
          : `${field} must be a whole number from 1 to ${Number.MAX_SAFE_INTEGER}`,
        { param: field },
      );
    }
    result[field as keyof LimitSettings] = value;
  }
  return result;
}
