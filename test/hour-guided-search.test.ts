import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../src/db/connect.js';
import { createRequestLogBatchWriter } from '../src/request-log/batch-writer.js';
import { hourGuidedSearch } from '../src/request-log/hour-guided-search.js';
import { RowBatch } from '../src/request-log/row-batch.js';
import type { RequestLogInsert } from '../src/request-log/row-layout.js';
import {
  plainRequestLogSearch,
  type RequestLogSearch,
  type RequestLogSummaryRow,
  type StatusClass,
  searchRequestLog,
} from '../src/request-log/search.js';
import { type OpenTestDatabase, openTestDatabase } from './support/database.js';

/**
 * The hour-guided log search (src/request-log/hour-guided-search.ts) returns exactly the plain search's pages: rows
 * written through the gateway's own batch writer (which keeps usage_hourly in step) over ~10 days of hours, then
 * every page of many filter combinations, followed cursor by cursor, compared with the plain search's page. Rare
 * rows are planted where a guide could go wrong: one match far back, rows sharing the cursor's millisecond and hour,
 * rows on hour boundaries, an hour whose rollups were removed (rollup_retention), another account's rows.
 */

let opened: OpenTestDatabase;
let handle: DatabaseHandle;

const hour = 3_600_000;
const start = Date.UTC(2026, 5, 1);
const hours = 240;
const account = 'acct_main';
const keys = ['key_a', 'key_b', 'key_c'];
const models = ['gpt', 'claude', 'embed', ''];
const endpoints = ['chat_completions', 'messages', 'embeddings', 'models', null];
const providers = ['openai', 'anthropic', null];
const statuses: Array<[number, string]> = [
  [200, 'success'],
  [200, 'success'],
  [200, 'success'],
  [429, 'error'],
  [502, 'error'],
  [499, 'cancelled'],
];

let sequence = 0;
function row(createdAt: number, fields: Partial<RequestLogInsert> = {}): RequestLogInsert {
  const index = sequence++;
  return {
    request_id: `req_${String(index).padStart(6, '0')}`,
    created_at: createdAt,
    account_id: account,
    key_id: 'key_a',
    key_name: 'a',
    model: 'gpt',
    endpoint: 'chat_completions',
    provider: 'openai',
    status: 200,
    outcome: 'success',
    stream: 0,
    usage_estimated: 0,
    latency_ms: 100 + (index % 900),
    ...fields,
  };
}

/** Deterministic rows: common ones in most hours, gaps of empty hours, and the planted rare ones. */
function generateRows(): RequestLogInsert[] {
  let state = 12345;
  const next = (below: number) => {
    state = (state * 48271) % 2147483647;
    return state % below;
  };
  const rows: RequestLogInsert[] = [];
  for (let at = 0; at < hours; at++) {
    // Some hours hold nothing at all, some only a few rows.
    if (next(7) === 0) continue;
    const count = next(5) === 0 ? 1 : 2 + next(6);
    for (let index = 0; index < count; index++) {
      const [status, outcome] = statuses[next(statuses.length)] as [number, string];
      const key = keys[next(keys.length)] as string;
      rows.push(
        row(start + at * hour + next(hour), {
          key_id: key,
          key_name: key,
          model: models[next(models.length)] as string,
          endpoint: endpoints[next(endpoints.length)] as string | null,
          provider: providers[next(providers.length)] as string | null,
          status,
          outcome,
        }),
      );
    }
  }
  // One match far back: the only 'rare' model row, in the third hour.
  rows.push(row(start + 2 * hour + 17, { model: 'rare', endpoint: 'embeddings', outcome: 'cancelled', status: 499 }));
  // Rows on hour boundaries (the first and last millisecond of an hour), and several sharing one millisecond.
  const edge = start + 100 * hour;
  rows.push(row(edge, { model: 'edge', outcome: 'cancelled', status: 499 }));
  rows.push(row(edge - 1, { model: 'edge', outcome: 'cancelled', status: 499 }));
  rows.push(row(edge + hour - 1, { model: 'edge', outcome: 'cancelled', status: 499 }));
  for (let index = 0; index < 9; index++) {
    rows.push(row(edge + 1800_000, { model: index % 2 === 0 ? 'edge' : 'gpt', outcome: 'cancelled', status: 499 }));
  }
  // Rows at the first and last millisecond of hours with no match around them (a run of one hour each).
  rows.push(row(start + 150 * hour, { model: 'lonely' }));
  rows.push(row(start + 147 * hour + hour - 1, { model: 'lonely' }));
  rows.push(row(start + 140 * hour + 5, { model: 'lonely' }));
  // Another account's rows: never in this account's pages.
  for (let at = 0; at < hours; at += 5) {
    rows.push(row(start + at * hour + 5, { account_id: 'acct_other', model: 'rare', outcome: 'cancelled' }));
  }
  return rows;
}

/** Rows of hours whose rollups are then deleted (as rollup_retention would), in an account of their own. */
function rowsWithoutRollups(): RequestLogInsert[] {
  return Array.from({ length: 40 }, (_, index) =>
    row(start + Math.floor(index / 4) * hour + index, {
      account_id: 'acct_trimmed',
      model: index % 3 === 0 ? 'rare' : 'gpt',
      outcome: index % 5 === 0 ? 'cancelled' : 'success',
    }),
  );
}

beforeAll(async () => {
  opened = await openTestDatabase('guided');
  handle = opened.handle;
  const write = createRequestLogBatchWriter(handle);
  const rows = [...generateRows(), ...rowsWithoutRollups()].sort(
    (first, second) => first.created_at - second.created_at,
  );
  for (let first = 0; first < rows.length; first += 200) await write(RowBatch.of(rows.slice(first, first + 200)));
  // The trimmed account's first 6 hours lose their rollups, the rows stay.
  await handle.db
    .deleteFrom('usage_hourly')
    .where('account_id', '=', 'acct_trimmed')
    .where('period_start', '<', start + 6 * hour)
    .execute();
});

afterAll(() => opened?.close());

const ids = (rows: RequestLogSummaryRow[]) => rows.map((entry) => entry.request_id);

/** Follows the cursor to the end, comparing each guided page with the plain one; returns the pages' row counts. */
async function comparePages(search: RequestLogSearch, keyIds?: string[]): Promise<number> {
  let before = search.before;
  let total = 0;
  for (let page = 0; page < 5000; page++) {
    const current = { ...search, before };
    const plain = await plainRequestLogSearch(handle.db, current, keyIds);
    const guided = await hourGuidedSearch(
      handle.db,
      current,
      keyIds,
      (narrowed) => plainRequestLogSearch(handle.db, narrowed, keyIds),
      // Guided whatever the density, so that every filter combination goes through it.
      { onlyWhenSparse: false },
    );
    // An account without rollups (no rows, or rows from before the rollups) is left to the plain search.
    if (search.accountId !== 'acct_none') expect(guided, `page ${page} of ${JSON.stringify(current)}`).toBeDefined();
    expect(ids(guided ?? plain), `page ${page} of ${JSON.stringify(current)}`).toEqual(ids(plain));
    // The server's search: the same rows, every column.
    if (keyIds === undefined) expect(await searchRequestLog(handle.db, current)).toEqual(plain);
    total += plain.length;
    const last = plain.at(-1);
    if (plain.length < search.limit || !last) return total;
    before = { createdAt: Number(last.created_at), id: Number(last.id) };
  }
  throw new Error('more pages than rows');
}

// Each case follows every page to the end, hundreds of queries; on a busy machine that outlasts the default timeout.
describe('hour-guided request-log search', { timeout: 180_000 }, () => {
  it('returns the plain search page for page for rare, common and empty filter combinations', async () => {
    const edge = start + 100 * hour;
    const cases: Array<[string, Partial<RequestLogSearch>, number]> = [
      ['no filter', {}, 1],
      ['one match far back', { model: 'rare' }, 1],
      ['one match far back, more filters', { model: 'rare', endpoint: 'embeddings', status: 'cancelled' }, 1],
      ['no match', { model: 'rare', status: 'success' }, 0],
      ['no match at all', { model: 'nothing' }, 0],
      ['boundaries and ties', { model: 'edge' }, 1],
      ['first and last millisecond of isolated hours', { model: 'lonely' }, 3],
      ['boundaries and ties, one per page', { model: 'edge', status: 'cancelled' }, 1],
      [
        'ties, cursor inside the shared millisecond',
        { status: 'cancelled', before: { createdAt: edge + 1800_000, id: Number.MAX_SAFE_INTEGER } },
        1,
      ],
      ['cursor at an hour boundary', { model: 'edge', before: { createdAt: edge, id: Number.MAX_SAFE_INTEGER } }, 1],
      ['rows before the rollups begin', { accountId: 'acct_trimmed', model: 'rare' }, 1],
      ['rows before the rollups begin, all', { accountId: 'acct_trimmed' }, 1],
      ['an account with no rows', { accountId: 'acct_none' }, 0],
    ];
    for (const [name, filters, least] of cases) {
      for (const limit of [1, 3, 50]) {
        const total = await comparePages({ accountId: account, limit, ...filters });
        expect(total, name).toBeGreaterThanOrEqual(least);
        if (least === 0) expect(total, name).toBe(0);
      }
    }
  });

  it('agrees with the plain search for any combination of the filters the rollup holds', async () => {
    let matched = 0;
    // Each filter absent twice as often as present, so that combinations of two or three filters find rows.
    const sometimes = <T>(arbitrary: fc.Arbitrary<T>) =>
      fc.oneof({ arbitrary: fc.constant(undefined), weight: 2 }, { arbitrary, weight: 1 });
    const optional = <T>(values: T[]) => sometimes(fc.constantFrom(...values));
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          keyId: optional(keys),
          model: optional([...models.filter(Boolean), 'rare', 'edge', 'lonely']),
          endpoint: optional(['chat_completions', 'messages', 'embeddings', 'models']),
          provider: optional(['openai', 'anthropic']),
          status: optional<StatusClass>(['success', 'error', 'client_error', 'server_error', 'cancelled']),
          from: sometimes(fc.integer({ min: start - hour, max: start + hours * hour })),
          span: sometimes(fc.integer({ min: 1, max: 120 * hour })),
          environmentKeys: sometimes(fc.subarray(keys)),
          limit: fc.constantFrom(1, 4, 25),
        }),
        async ({ span, environmentKeys, ...filters }) => {
          const to = span === undefined ? undefined : (filters.from ?? start + (hours / 2) * hour) + span;
          matched += await comparePages({ accountId: account, ...filters, to }, environmentKeys);
        },
      ),
      { numRuns: 60 },
    );
    // The combinations found rows (the comparison is not of empty pages only).
    expect(matched).toBeGreaterThan(100);
  });

  it('leaves operator-wide searches, filters the rollup cannot narrow and dense matches to the plain search', async () => {
    const run = (search: RequestLogSearch) => hourGuidedSearch(handle.db, search, undefined, async () => []);
    expect(await run({ limit: 10, status: 'cancelled' })).toBeUndefined();
    expect(await run({ accountId: account, limit: 10, minLatencyMs: 500 })).toBeUndefined();
    expect(await run({ accountId: account, limit: 10, requestId: 'req_000001' })).toBeUndefined();
    // Where the plain search walks only matches (one filter) or matches are dense, the server keeps it too...
    expect(await run({ accountId: account, limit: 10, model: 'gpt' })).toBeUndefined();
    expect(await run({ accountId: account, limit: 10, model: 'gpt', status: 'success' })).toBeUndefined();
    // ...and takes the guide where two filters match hours apart.
    expect(await run({ accountId: account, limit: 10, model: 'rare', status: 'cancelled' })).toEqual([]);
    expect(await run({ accountId: account, limit: 10, model: 'lonely', endpoint: 'chat_completions' })).toEqual([]);
  });
});
