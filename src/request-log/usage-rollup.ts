import {
  inferenceEndpoints,
  keyRollup,
  latencyBucketOf,
  type RollupPeriod,
  type RollupShape,
  rollupPeriodMs,
  rollupShapes,
  rollupSumColumns,
} from '../db/usage-rollup-layout.js';
import { cellValue, type RowBatchMessage, textSlot } from './row-batch.js';
import { requestLogColumns } from './row-layout.js';

/**
 * A batch of log rows summed into rollup rows (db/usage-rollup-layout.ts), which both engines' writers upsert in
 * the batch's own transaction: the rollups then always equal the log, whatever fails. The same rules as the rebuild's
 * SQL (db/repositories/usage-rollups.ts); a property test checks the two agree.
 */

export interface RollupRow {
  accountId: string;
  periodStart: number;
  keyId: string;
  model: string;
  endpoint: string;
  provider: string;
  /** In rollupSumColumns order. */
  sums: Float64Array;
}

const column = (name: (typeof requestLogColumns)[number]) => requestLogColumns.indexOf(name);
const accountColumn = column('account_id');
const keyColumn = column('key_id');
const modelColumn = column('model');
const endpointColumn = column('endpoint');
const providerColumn = column('provider');
const createdAtColumn = column('created_at');
const outcomeColumn = column('outcome');
const latencyColumn = column('latency_ms');
const promptColumn = column('prompt_tokens');
const completionColumn = column('completion_tokens');
const totalColumn = column('total_tokens');
const costColumn = column('cost_usd');

const sumPlace = (name: string) => rollupSumColumns.indexOf(name);
const requestsPlace = sumPlace('requests');
const errorsPlace = sumPlace('errors');
const cancelledPlace = sumPlace('cancelled');
const promptPlace = sumPlace('prompt_tokens');
const completionPlace = sumPlace('completion_tokens');
const totalPlace = sumPlace('total_tokens');
const costPlace = sumPlace('cost_usd');
const latencyCountPlace = sumPlace('latency_count');
const latencySumPlace = sumPlace('latency_sum_ms');
const firstBucketPlace = sumPlace('lat_0');
const sumWidth = rollupSumColumns.length;

const inference: ReadonlySet<string> = new Set(inferenceEndpoints);

/** Whether a row's latency counts in latency figures (successful model calls only). */
export function isTimed(outcome: string, endpoint: string | null, model: string): boolean {
  if (outcome !== 'success') return false;
  return endpoint === null ? model !== '' : inference.has(endpoint);
}

const text = (batch: RowBatchMessage, row: number, at: number): string => {
  const value = cellValue(batch, row, at);
  return value === null ? '' : (value as string);
};
const number = (batch: RowBatchMessage, row: number, at: number): number => {
  const value = cellValue(batch, row, at);
  return value === null ? 0 : (value as number);
};

/** The batch's rows summed per account, hour, key, model, endpoint and provider, in primary-key order. */
export function hourlyRollup(batch: RowBatchMessage): RollupRow[] {
  const hour = rollupPeriodMs.hour;
  const groups = new Map<string, RollupRow>();
  for (let row = 0; row < batch.count; row++) {
    const periodStart = Math.floor(number(batch, row, createdAtColumn) / hour) * hour;
    // Texts that repeat share a slot in the batch, so the slots identify the group without building its strings.
    const identity = `${periodStart},${textSlot(batch, row, accountColumn)},${textSlot(batch, row, keyColumn)},${textSlot(batch, row, modelColumn)},${textSlot(batch, row, endpointColumn)},${textSlot(batch, row, providerColumn)}`;
    let group = groups.get(identity);
    if (!group) {
      group = {
        accountId: text(batch, row, accountColumn),
        periodStart,
        keyId: text(batch, row, keyColumn),
        model: text(batch, row, modelColumn),
        endpoint: text(batch, row, endpointColumn),
        provider: text(batch, row, providerColumn),
        sums: new Float64Array(sumWidth),
      };
      groups.set(identity, group);
    }
    const sums = group.sums;
    const outcome = text(batch, row, outcomeColumn);
    sums[requestsPlace] = (sums[requestsPlace] as number) + 1;
    if (outcome === 'error') sums[errorsPlace] = (sums[errorsPlace] as number) + 1;
    if (outcome === 'cancelled') sums[cancelledPlace] = (sums[cancelledPlace] as number) + 1;
    sums[promptPlace] = (sums[promptPlace] as number) + number(batch, row, promptColumn);
    sums[completionPlace] = (sums[completionPlace] as number) + number(batch, row, completionColumn);
    sums[totalPlace] = (sums[totalPlace] as number) + number(batch, row, totalColumn);
    sums[costPlace] = (sums[costPlace] as number) + number(batch, row, costColumn);
    const endpoint = cellValue(batch, row, endpointColumn) as string | null;
    if (isTimed(outcome, endpoint, group.model)) {
      const latency = number(batch, row, latencyColumn);
      sums[latencyCountPlace] = (sums[latencyCountPlace] as number) + 1;
      sums[latencySumPlace] = (sums[latencySumPlace] as number) + latency;
      const place = firstBucketPlace + latencyBucketOf(latency);
      sums[place] = (sums[place] as number) + 1;
    }
  }
  return sortByKey([...groups.values()]);
}

/**
 * Hourly rollup rows summed into the periods of `period` and the dimensions `shape` keeps (the others become '',
 * which rollupParameters leaves out).
 */
export function coarserRollup(
  rows: readonly RollupRow[],
  period: RollupPeriod,
  shape: RollupShape = keyRollup,
): RollupRow[] {
  const size = rollupPeriodMs[period];
  const keeps = new Set<string>(shape.dimensions);
  const [account, key, model, endpoint, provider] = (
    ['account_id', 'key_id', 'model', 'endpoint', 'provider'] as const
  ).map((dimension) => keeps.has(dimension));
  const groups = new Map<string, RollupRow>();
  for (const row of rows) {
    const grouped: RollupRow = {
      accountId: account ? row.accountId : '',
      periodStart: Math.floor(row.periodStart / size) * size,
      keyId: key ? row.keyId : '',
      model: model ? row.model : '',
      endpoint: endpoint ? row.endpoint : '',
      provider: provider ? row.provider : '',
      sums: row.sums,
    };
    const identity = JSON.stringify([
      grouped.accountId,
      grouped.periodStart,
      grouped.keyId,
      grouped.model,
      grouped.endpoint,
      grouped.provider,
    ]);
    const group = groups.get(identity);
    if (!group) {
      groups.set(identity, { ...grouped, sums: Float64Array.from(row.sums) });
      continue;
    }
    for (let place = 0; place < sumWidth; place++)
      group.sums[place] = (group.sums[place] as number) + (row.sums[place] as number);
  }
  return sortByKey([...groups.values()]);
}

/**
 * Primary-key order: two PostgreSQL nodes upserting overlapping rows then lock them in the same order and cannot
 * deadlock; on SQLite, neighbours in the WITHOUT ROWID tree are written together.
 */
function sortByKey(rows: RollupRow[]): RollupRow[] {
  const compare = (first: string, second: string) => (first < second ? -1 : first > second ? 1 : 0);
  return rows.sort(
    (first, second) =>
      compare(first.accountId, second.accountId) ||
      first.periodStart - second.periodStart ||
      compare(first.keyId, second.keyId) ||
      compare(first.model, second.model) ||
      compare(first.endpoint, second.endpoint) ||
      compare(first.provider, second.provider),
  );
}

const rowFields: Record<string, 'accountId' | 'periodStart' | 'keyId' | 'model' | 'endpoint' | 'provider'> = {
  account_id: 'accountId',
  period_start: 'periodStart',
  key_id: 'keyId',
  model: 'model',
  endpoint: 'endpoint',
  provider: 'provider',
};

/** A rollup row as the upsert's parameters: the shape's key columns, then sums (rollupUpsertSql's order). */
export function rollupParameters(row: RollupRow, into: unknown[], at: number, shape: RollupShape = keyRollup): number {
  let position = at;
  for (const column of shape.keyColumns) into[position++] = row[rowFields[column] as keyof RollupRow];
  for (let place = 0; place < sumWidth; place++) into[position++] = row.sums[place];
  return position;
}

/** Parameters per row of a shape's upsert. */
export const rollupParameterCount = (shape: RollupShape = keyRollup): number => shape.keyColumns.length + sumWidth;

/** A rollup table the writers upsert each batch into. */
export interface RollupTarget {
  shape: RollupShape;
  period: RollupPeriod;
  table: string;
}

/**
 * Every rollup table in the order the writers upsert them: the key rollup first, the one across accounts last, so
 * on PostgreSQL the rows every node's batches share are locked for the shortest time (until the commit right after).
 */
export const rollupTargets: readonly RollupTarget[] = [...rollupShapes]
  .reverse()
  .flatMap((shape) => (['hour', 'day'] as const).map((period) => ({ shape, period, table: shape.tables[period] })));

/** The batch's rollup rows for one target, from its hourly key rollup rows. */
export function rollupRowsFor(hourly: readonly RollupRow[], target: RollupTarget): readonly RollupRow[] {
  return target.shape === keyRollup && target.period === 'hour'
    ? hourly
    : coarserRollup(hourly, target.period, target.shape);
}
