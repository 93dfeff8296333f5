import { apiError } from '../errors/api-error.js';
import { type LimitSettings, limitFields, parseStoredLimits, type StoredLimits } from './settings.js';

/**
 * Who may change a key's limits and budgets. Members may not (the route refuses them). An operator (admin, or the
 * CLI) may set anything, and what they set bounds the account's owners: an owner may tighten a limit an operator set
 * (a smaller number, a smaller budget), never loosen or remove it. Where no operator set a limit on the key, the
 * configured key default (limits.key_defaults) is the operator's bound. Each limit records who set it last.
 */

export type LimitRole = 'operator' | 'owner';

export interface LimitSetter {
  role: LimitRole;
  /** null: the CLI (the operator at the shell). */
  userId: string | null;
}

export type LimitSetters = Partial<Record<keyof LimitSettings, LimitSetter>>;

export function parseLimitSetters(text: string | null): LimitSetters {
  if (!text) return {};
  try {
    const value = JSON.parse(text) as Record<string, unknown>;
    const result: LimitSetters = {};
    for (const field of limitFields) {
      const item = value[field] as { role?: unknown; userId?: unknown } | undefined;
      if (item && (item.role === 'operator' || item.role === 'owner')) {
        result[field] = { role: item.role, userId: typeof item.userId === 'string' ? item.userId : null };
      }
    }
    return result;
  } catch {
    return {};
  }
}

export interface KeyLimitState {
  limits: StoredLimits;
  operatorLimits: StoredLimits;
  setters: LimitSetters;
}

export function keyLimitState(row: {
  limits: string | null;
  operator_limits: string | null;
  limits_set_by: string | null;
}): KeyLimitState {
  return {
    limits: parseStoredLimits(row.limits),
    operatorLimits: parseStoredLimits(row.operator_limits),
    setters: parseLimitSetters(row.limits_set_by),
  };
}

/** The loosest value an owner may set for a field: the operator's on the key, else the configured default. */
function boundFor(field: keyof LimitSettings, state: KeyLimitState, keyDefaults: LimitSettings): number | null {
  const operator = state.operatorLimits[field];
  return operator === undefined ? keyDefaults[field] : operator;
}

const describeValue = (field: keyof LimitSettings, value: number) =>
  field.endsWith('BudgetUsd') ? `$${value}` : String(value);

/** The state after `change` (already validated) made by `by`; an owner loosening an operator's bound gets a 403. */
export function applyKeyLimitChange(
  state: KeyLimitState,
  change: StoredLimits,
  by: LimitSetter,
  keyDefaults: LimitSettings,
): KeyLimitState {
  const next: KeyLimitState = {
    limits: { ...state.limits },
    operatorLimits: { ...state.operatorLimits },
    setters: { ...state.setters },
  };
  for (const field of limitFields) {
    const value = change[field];
    if (value === undefined) continue;
    if (by.role === 'owner') {
      const bound = boundFor(field, state, keyDefaults);
      if (bound !== null && (value === null || value > bound)) {
        throw apiError(
          'limit_set_by_operator',
          `${field} is bounded by the operator at ${describeValue(field, bound)}: an account owner may set it lower, ` +
            'not higher or unlimited. Ask the operator to change it.',
        );
      }
    } else {
      next.operatorLimits[field] = value;
    }
    next.limits[field] = value;
    next.setters[field] = by;
  }
  return next;
}
