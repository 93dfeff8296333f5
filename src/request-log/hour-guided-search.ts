import { type Kysely, sql } from 'kysely';
import type { Database } from '../db/schema.js';
import { rollupPeriodMs } from '../db/usage-rollup-layout.js';

/**
 * The request-log search guided by the hourly rollups. A rare combination of filters (embeddings + cancelled) made
 * the plain search walk one (account_id, X, created_at, id) index back through months, testing the other filters
 * row by row. `usage_hourly` says which hours hold at least one row of an account's key, model, endpoint, provider
 * and outcome; the log is then searched only within those hours, newest first, until the page is full
 * (docs/performance.md, "Usage reports and the request log at 10 million rows").
 *
 * Exactness: the hours read are a superset of those holding a matching row (a filter the rollup cannot express is
 * left out of the hour query, and 4xx/5xx read as "any error"), every hour is searched with the search's own filters
 * and cursor, and hours are taken newest first and never overlap, so the rows and their order are the plain search's.
 * Rows older than the account's oldest rollup hour (rolled-up history removed, or never rolled up) are searched
 * plainly after the guided hours.
 */

/** The parts of a log search the guide reads (search.ts's RequestLogSearch has them; no import, no cycle). */
export interface HourGuidedSearchInput {
  accountId?: string | undefined;
  keyId?: string | undefined;
  model?: string | undefined;
  endpoint?: string | undefined;
  provider?: string | undefined;
  minLatencyMs?: number | undefined;
  requestId?: string | undefined;
  status?: string | undefined;
  from?: number | undefined;
  to?: number | undefined;
  limit: number;
  before?: { createdAt: number; id: number } | undefined;
}

const hourMs = rollupPeriodMs.hour;
const hourOf = (time: number) => Math.floor(time / hourMs) * hourMs;

/** Hours read from the rollup per step: few first (a common filter fills its page from the newest hour), then more. */
const firstHoursRead = 8;
const mostHoursRead = 512;

/**
 * The guide costs a statement per run of matching hours, where the plain search walks
 * one index's rows. With one filter that index holds only matches; with two or more, the guide is taken only when the
 * newest matching hours are on average this many hours apart, so that each statement skips hours of rows (measured
 * in docs/performance.md, "Usage reports and the request log at 10 million rows").
 */
const sparseHoursApart = 8;

/**
 * Whether the guide applies: an account's log (the rollup's key leads with the account), and no filter that an
 * index answers better (the request id) or that the rollup cannot narrow (a latency threshold).
 */
export function hourGuideApplies(search: HourGuidedSearchInput): boolean {
  return search.accountId !== undefined && search.requestId === undefined && search.minLatencyMs === undefined;
}

interface HourQuery {
  accountId: string;
  /** Inclusive. */
  lowest: number;
  /** Exclusive; absent: up to the newest hour. */
  below: number | undefined;
  count: number;
}

/** The hours in [lowest, below) with at least one rollup row the search's filters may match, newest first. */
async function matchingHours(
  db: Kysely<Database>,
  search: HourGuidedSearchInput,
  keyIds: readonly string[] | undefined,
  range: HourQuery,
): Promise<number[]> {
  let query = db
    .selectFrom('usage_hourly')
    .select('period_start')
    .where('account_id', '=', range.accountId)
    .where('period_start', '>=', range.lowest);
  if (range.below !== undefined) query = query.where('period_start', '<', range.below);
  if (search.keyId !== undefined) query = query.where('key_id', '=', search.keyId);
  if (keyIds !== undefined) query = query.where('key_id', 'in', keyIds.length > 0 ? keyIds : ['']);
  if (search.model !== undefined) query = query.where('model', '=', search.model);
  // The rollup stores a missing endpoint or provider as ''; a filter never names '' (and if it did, '' is a superset).
  if (search.endpoint !== undefined) query = query.where('endpoint', '=', search.endpoint);
  if (search.provider !== undefined) query = query.where('provider', '=', search.provider);
  switch (search.status) {
    case undefined:
      break;
    case 'success':
      query = query.where(sql<number>`requests - errors - cancelled`, '>', 0);
      break;
    case 'cancelled':
      query = query.where('cancelled', '>', 0);
      break;
    default:
      // error, client_error, server_error: the rollup counts errors, not their status; any error hour is searched.
      query = query.where('errors', '>', 0);
  }
  const rows = await query.groupBy('period_start').orderBy('period_start', 'desc').limit(range.count).execute();
  return rows.map((row) => Number(row.period_start));
}

/** Hours (newest first) merged into runs of consecutive hours, as [start, end) ranges newest first. */
function runsOf(hours: readonly number[]): Array<{ start: number; end: number }> {
  const runs: Array<{ start: number; end: number }> = [];
  for (const hour of hours) {
    const last = runs.at(-1);
    if (last && last.start === hour + hourMs) last.start = hour;
    else runs.push({ start: hour, end: hour + hourMs });
  }
  return runs;
}

/**
 * The search's page, read hour by hour as the rollup guides, or undefined when the guide does not apply or would not
 * pay (`onlyWhenSparse`; the caller then runs the plain search). `pageWithin` is the plain search with the key environment already resolved to
 * `keyIds`; it is called with the search's from/to narrowed to each run of hours.
 */
export async function hourGuidedSearch<Search extends HourGuidedSearchInput, Row>(
  db: Kysely<Database>,
  search: Search,
  keyIds: readonly string[] | undefined,
  pageWithin: (narrowed: Search) => Promise<Row[]>,
  options: { onlyWhenSparse: boolean } = { onlyWhenSparse: true },
): Promise<Row[] | undefined> {
  const accountId = search.accountId;
  if (accountId === undefined || !hourGuideApplies(search)) return undefined;
  const filters = [search.keyId ?? keyIds, search.model, search.endpoint, search.provider, search.status];
  if (options.onlyWhenSparse && filters.filter((filter) => filter !== undefined).length < 2) return undefined;
  const oldest = await db
    .selectFrom('usage_hourly')
    .select((select) => select.fn.min('period_start').as('oldest'))
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  if (oldest?.oldest === null || oldest?.oldest === undefined) return undefined;
  const oldestHour = Number(oldest.oldest);

  // The newest instant a row of the page can have: just before `to`, at the cursor (a tie on created_at is older).
  const newest = Math.min(
    search.before?.createdAt ?? Number.POSITIVE_INFINITY,
    (search.to ?? Number.POSITIVE_INFINITY) - 1,
  );
  let below = Number.isFinite(newest) ? hourOf(newest) + hourMs : undefined;
  const lowest = Math.max(oldestHour, search.from === undefined ? oldestHour : hourOf(search.from));
  const rows: Row[] = [];
  const narrowed = (start: number, end: number): Search => ({
    ...search,
    limit: search.limit - rows.length,
    from: Math.max(search.from ?? start, start),
    to: Math.min(search.to ?? end, end),
  });

  for (let count = firstHoursRead; below === undefined || below > lowest; count = Math.min(count * 4, mostHoursRead)) {
    const hours = await matchingHours(db, search, keyIds, { accountId, lowest, below, count });
    const oldestRead = hours.at(-1);
    if (options.onlyWhenSparse && count === firstHoursRead && hours.length === count && oldestRead !== undefined) {
      const span = (below ?? (hours[0] as number) + hourMs) - oldestRead;
      if (span < count * sparseHoursApart * hourMs) return undefined;
    }
    for (const run of runsOf(hours)) {
      rows.push(...(await pageWithin(narrowed(run.start, run.end))));
      if (rows.length >= search.limit) return rows;
    }
    if (hours.length < count) break;
    below = oldestRead;
  }
  // Rows from before the account's rollups begin: none unless rollups were removed before their rows.
  if (search.from === undefined || search.from < oldestHour) {
    const end = Math.min(search.to ?? oldestHour, oldestHour);
    rows.push(...(await pageWithin({ ...search, limit: search.limit - rows.length, to: end })));
  }
  return rows;
}
