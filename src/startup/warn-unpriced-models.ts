import type { Kysely } from 'kysely';
import type { Config } from '../config/schema.js';
import type { Database } from '../db/schema.js';
import { type LimitSettings, parseStoredLimits } from '../limits/settings.js';
import type { Logger } from '../observability/logger.js';
import { isUnpriced } from '../usage/budgets.js';

/**
 * A model served without prices costs nothing against budgets (its log rows have no cost): an operator who sets
 * budgets is told at start-up which models a budgeted key could spend through unchecked.
 */

/** The models that have a deployment without prices (neither its own nor the model's). */
function unpricedModels(models: Config['models']): string[] {
  return models.filter(isUnpriced).map((model) => model.name);
}

const hasBudget = (limits: Partial<LimitSettings>) =>
  typeof limits.dailyBudgetUsd === 'number' || typeof limits.monthlyBudgetUsd === 'number';

async function anyBudget(config: Config, db: Kysely<Database>): Promise<boolean> {
  if (hasBudget(config.limits.accountDefaults) || hasBudget(config.limits.keyDefaults)) return true;
  // Budgets set on accounts and keys: one pass over the rows with limits of their own, at start-up only.
  const accounts = await db.selectFrom('accounts').select('limits').where('limits', 'is not', null).execute();
  if (accounts.some((row) => hasBudget(parseStoredLimits(row.limits)))) return true;
  const keys = await db
    .selectFrom('api_keys')
    .select(['limits', 'operator_limits'])
    .where((where) => where.or([where('limits', 'is not', null), where('operator_limits', 'is not', null)]))
    .execute();
  return keys.some(
    (row) => hasBudget(parseStoredLimits(row.limits)) || hasBudget(parseStoredLimits(row.operator_limits)),
  );
}

export async function warnOfUnpricedModels(config: Config, db: Kysely<Database>, logger: Logger): Promise<void> {
  const models = unpricedModels(config.models);
  if (models.length === 0) return;
  // A warning never stops the start-up: without the database the budgets cannot be read, nor checked.
  const budgeted = await anyBudget(config, db).catch(() => true);
  if (!budgeted) return;
  logger.warn(
    { models },
    'budgets are set but these models have no pricing: their requests count as free against every budget ' +
      '(give them models[].pricing)',
  );
}
