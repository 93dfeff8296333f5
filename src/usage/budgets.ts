import type { Kysely } from 'kysely';
import type { ModelConfig } from '../config/schema.js';
import { sumSpend } from '../db/repositories/usage.js';
import type { Database } from '../db/schema.js';
import type { LimitSettings } from '../limits/settings.js';

/**
 * Budgets as the console's spend bars show them: each daily and monthly budget in force, what was spent in its
 * current period (from the usage rollups, which equal the log) and when the period resets. Periods are UTC calendar
 * days and months, as the limiter counts them (limits/memory-limiter.ts).
 */

export interface BudgetState {
  period: 'day' | 'month';
  limitUsd: number;
  spentUsd: number;
  remainingUsd: number;
  periodStart: string;
  resetsAt: string;
  exceeded: boolean;
}

export const atBudgetLimit =
  'Requests are refused with HTTP 429 and the error code insufficient_quota (OpenAI clients do not retry it) until ' +
  'the period resets; requests already running finish. Account and key budgets apply together: whichever is ' +
  'reached first refuses the key.';

/** A model with a deployment without prices: what it serves costs nothing against budgets. */
export function isUnpriced(model: ModelConfig): boolean {
  return model.deployments.some((deployment) => deployment.pricing === undefined);
}

const dayMs = 86_400_000;

export function budgetPeriods(now: number): Record<'day' | 'month', { start: number; end: number }> {
  const date = new Date(now);
  const dayStart = Math.floor(now / dayMs) * dayMs;
  return {
    day: { start: dayStart, end: dayStart + dayMs },
    month: {
      start: Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1),
      end: Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1),
    },
  };
}

export async function budgetStates(
  db: Kysely<Database>,
  subject: { accountId: string } | { keyId: string },
  limits: LimitSettings,
  now: number,
): Promise<BudgetState[]> {
  const periods = budgetPeriods(now);
  const states: BudgetState[] = [];
  for (const [period, limit] of [
    ['day', limits.dailyBudgetUsd],
    ['month', limits.monthlyBudgetUsd],
  ] as const) {
    if (limit === null) continue;
    const { start, end } = periods[period];
    const spent = await sumSpend(db, subject, start);
    states.push({
      period,
      limitUsd: limit,
      spentUsd: spent,
      remainingUsd: Math.max(0, limit - spent),
      periodStart: new Date(start).toISOString(),
      resetsAt: new Date(end).toISOString(),
      exceeded: spent >= limit,
    });
  }
  return states;
}
