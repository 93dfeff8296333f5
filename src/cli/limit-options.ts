import type { Command } from 'commander';
import type { StoredLimits } from '../limits/settings.js';

/** The flags of `accounts set-limits` and `keys set-limits`; "none" removes a limit. */
export function withLimitOptions(command: Command): Command {
  return command
    .option('--rpm <n|none>', 'requests per minute')
    .option('--tpm <n|none>', 'tokens per minute (prompt + completion)')
    .option('--concurrency <n|none>', 'requests in flight at once')
    .option('--daily-budget <usd|none>', 'US dollars per UTC day')
    .option('--monthly-budget <usd|none>', 'US dollars per UTC month');
}

export interface LimitFlags {
  rpm?: string;
  tpm?: string;
  concurrency?: string;
  dailyBudget?: string;
  monthlyBudget?: string;
}

/** Flags -> a change for validateLimitChange (which reports bad values naming the limit). */
export function limitChangeFromFlags(flags: LimitFlags): Record<string, unknown> {
  // Plain decimals only: Number() would also take "0x10", "1e30" and " 5 ", which no operator means as a limit.
  const count = (text: string | undefined, flag: string) => {
    if (text === undefined) return undefined;
    if (text === 'none') return null;
    const number = Number(text);
    if (!/^\d+$/.test(text) || !Number.isSafeInteger(number) || number < 1) {
      throw new Error(`${flag} "${text}" is not a whole number from 1 to ${Number.MAX_SAFE_INTEGER}, or "none"`);
    }
    return number;
  };
  const dollars = (text: string | undefined, flag: string) => {
    if (text === undefined) return undefined;
    if (text === 'none') return null;
    const number = Number(text);
    if (!/^\d+(\.\d+)?$/.test(text) || !Number.isFinite(number)) {
      throw new Error(`${flag} "${text}" is not an amount of US dollars (e.g. 25 or 2.50), or "none"`);
    }
    return number;
  };
  const change = {
    requestsPerMinute: count(flags.rpm, '--rpm'),
    tokensPerMinute: count(flags.tpm, '--tpm'),
    concurrentRequests: count(flags.concurrency, '--concurrency'),
    dailyBudgetUsd: dollars(flags.dailyBudget, '--daily-budget'),
    monthlyBudgetUsd: dollars(flags.monthlyBudget, '--monthly-budget'),
  };
  if (Object.values(change).every((item) => item === undefined)) {
    throw new Error('give at least one of --rpm, --tpm, --concurrency, --daily-budget, --monthly-budget');
  }
  return change;
}

/** "rpm 60, $5/day" for tables; "(defaults)" when nothing is set. */
export function describeLimits(limits: StoredLimits): string {
  const parts: string[] = [];
  const show = (value: number | null | undefined, text: (value: number) => string, label: string) => {
    if (value === undefined) return;
    parts.push(value === null ? `no ${label}` : text(value));
  };
  show(limits.requestsPerMinute, (value) => `${value} rpm`, 'rpm');
  show(limits.tokensPerMinute, (value) => `${value} tpm`, 'tpm');
  show(limits.concurrentRequests, (value) => `${value} concurrent`, 'concurrency limit');
  show(limits.dailyBudgetUsd, (value) => `$${value}/day`, 'daily budget');
  show(limits.monthlyBudgetUsd, (value) => `$${value}/month`, 'monthly budget');
  return parts.length === 0 ? '(defaults)' : parts.join(', ');
}
