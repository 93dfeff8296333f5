import type { Kysely } from 'kysely';
import type { ArrayReader } from '../db/array-reader.js';
import type { Dialect } from '../db/migrations/dialect.js';
import { type UsageGroupBy, type UsageGroupRow, usageRollupGroups } from '../db/repositories/usage.js';
import type { Database } from '../db/schema.js';
import { latencyBucketCount, rollupPeriodMs } from '../db/usage-rollup-layout.js';

/**
 * Usage per local day (a viewer's time zone) from the daily rollups plus a few hours of the hourly ones, instead of
 * every hourly row: an hour belongs to the local day it starts in, which is its UTC day shifted by `shift` (-1, 0 or
 * +1, depending only on the hour of the day). Hours of the day split into two runs with different shifts; each local
 * day is the UTC day of the larger run's shift, minus the smaller run's hours of that UTC day, plus the smaller run's
 * hours of the UTC day its shift points to. At UTC-5 that reads 5 of every 24 hourly rows (measured in
 * docs/performance.md). Counts and histograms are exact; a cost may differ from a plain sum in its last bits.
 */

const day: number = rollupPeriodMs.day;
const hour: number = rollupPeriodMs.hour;

export interface LocalDayQuery {
  accountId?: string | undefined;
  /** Local days since the epoch: the first one included and the first one not. */
  firstBucket: number;
  endBucket: number;
  offsetMs: number;
  groupBy: UsageGroupBy;
  dialect?: Dialect | undefined;
  readArrays?: ArrayReader | undefined;
}

/** The hours of a UTC day in two runs, [0, cut) and [cut, day), with the local-day shift of each. */
export function shiftRuns(offsetMs: number): Array<{ from: number; to: number; shift: number }> {
  const shiftOf = (start: number) => Math.floor((start + offsetMs) / day);
  // The first hour whose shift differs from midnight's: the run boundary (none when every hour shifts alike).
  let cut = day;
  for (let start = hour; start < day; start += hour) {
    if (shiftOf(start) !== shiftOf(0)) {
      cut = start;
      break;
    }
  }
  const runs = [{ from: 0, to: cut, shift: shiftOf(0) }];
  if (cut < day) runs.push({ from: cut, to: day, shift: shiftOf(cut) });
  return runs;
}

function addInto(into: UsageGroupRow, row: UsageGroupRow, sign: number): void {
  into.requests += sign * row.requests;
  into.errors += sign * row.errors;
  into.cancelled += sign * row.cancelled;
  into.promptTokens += sign * row.promptTokens;
  into.completionTokens += sign * row.completionTokens;
  into.totalTokens += sign * row.totalTokens;
  into.costUsd += sign * row.costUsd;
  into.latencyCount += sign * row.latencyCount;
  into.latencySumMs += sign * row.latencySumMs;
  for (let index = 0; index < latencyBucketCount; index++) {
    into.latencyHistogram[index] =
      (into.latencyHistogram[index] as number) + sign * (row.latencyHistogram[index] as number);
  }
}

export async function localDayGroups(db: Kysely<Database>, query: LocalDayQuery): Promise<UsageGroupRow[]> {
  const runs = shiftRuns(query.offsetMs);
  const [main, minority] = [...runs].sort((first, second) => second.to - second.from - (first.to - first.from));
  if (!main) return [];
  const { firstBucket, endBucket } = query;
  // Local day b = UTC day (b - main.shift), so bucket = UTC day + main.shift: an offset of whole days.
  const daily = await usageRollupGroups(db, {
    accountId: query.accountId,
    period: 'day',
    from: (firstBucket - main.shift) * day,
    to: (endBucket - main.shift) * day,
    bucketMs: day,
    offsetMs: main.shift * day,
    groupBy: query.groupBy,
    dialect: query.dialect,
    readArrays: query.readArrays,
  });
  if (!minority) return daily;

  const shifts = [main.shift, minority.shift];
  const corrections = await usageRollupGroups(db, {
    accountId: query.accountId,
    period: 'hour',
    from: (firstBucket - Math.max(...shifts)) * day,
    to: (endBucket - Math.min(...shifts)) * day,
    bucketMs: day,
    offsetMs: 0,
    timeOfDay: { from: minority.from, to: minority.to },
    groupBy: query.groupBy,
    dialect: query.dialect,
    readArrays: query.readArrays,
  });
  const sums = new Map<string, UsageGroupRow>();
  const apply = (row: UsageGroupRow, bucket: number, sign: number) => {
    if (bucket < firstBucket || bucket >= endBucket) return;
    const identity = `${bucket}\u0000${row.groupId ?? '\u0001'}`;
    let into = sums.get(identity);
    if (!into) {
      into = { ...row, bucket, latencyHistogram: [...row.latencyHistogram] };
      for (const name of ['requests', 'errors', 'cancelled', 'promptTokens', 'completionTokens'] as const)
        into[name] = 0;
      into.totalTokens = 0;
      into.costUsd = 0;
      into.latencyCount = 0;
      into.latencySumMs = 0;
      into.latencyHistogram.fill(0);
      sums.set(identity, into);
    }
    addInto(into, row, sign);
  };
  for (const row of daily) apply(row, row.bucket as number, 1);
  for (const row of corrections) {
    const utcDay = row.bucket as number;
    apply(row, utcDay + minority.shift, 1);
    apply(row, utcDay + main.shift, -1);
  }
  // A subtraction leaves binary noise in a cost (0.1 + 0.2 - 0.2): rounded to a millionth of a micro-dollar.
  return [...sums.values()]
    .filter((row) => row.requests > 0)
    .map((row) => ({ ...row, costUsd: Math.round(row.costUsd * 1e12) / 1e12 }));
}
