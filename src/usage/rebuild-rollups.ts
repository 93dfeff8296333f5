import type { DatabaseHandle } from '../db/connect.js';
import { type RebuildResult, rebuildUsageRollups } from '../db/repositories/usage-rollups.js';

/**
 * `switchboard usage rebuild-rollups`: recomputes the usage rollups from the request log, for when they are ever in
 * doubt (a restored backup of the log alone, rows imported by hand). Only the range the log still holds is rebuilt:
 * older rollups have outlived their rows (rollup_retention) and are kept as they are.
 */

export interface RebuildOptions {
  from?: number | undefined;
  to?: number | undefined;
  /** request_log.retention and its interval, to tell an hour retention has trimmed from one the log began in. */
  retentionMs: number;
  retentionIntervalMs: number;
  now?: number;
}

const hourMs = 3_600_000;

export async function rebuildRollupsFromLog(
  handle: DatabaseHandle,
  options: RebuildOptions,
): Promise<RebuildResult | undefined> {
  const now = options.now ?? Date.now();
  let from = options.from;
  if (from === undefined) {
    const oldest = await handle.db
      .selectFrom('request_log')
      .select((select) => select.fn.min('created_at').as('oldest'))
      .executeTakeFirst();
    if (oldest?.oldest === null || oldest?.oldest === undefined) return undefined;
    const first = Number(oldest.oldest);
    // Retention deletes up to a cutoff inside an hour: that hour's raw rows are partial, so its rollup (still whole)
    // is kept and the rebuild starts at the next hour. A log retention has not reached starts where its first row is.
    const trimmed = options.retentionMs > 0 && first < now - options.retentionMs + options.retentionIntervalMs + hourMs;
    from = trimmed ? Math.ceil(first / hourMs) * hourMs : first;
  }
  const to = options.to ?? now + hourMs;
  if (from >= to) throw new Error('--from must be earlier than --to');
  // One transaction: a log batch written meanwhile waits for it (SQLite's single writer; PostgreSQL's table lock),
  // then adds its rows to the rebuilt sums.
  return handle.db
    .transaction()
    .execute((transaction) => rebuildUsageRollups(transaction, handle.dialect, { from, to }));
}
