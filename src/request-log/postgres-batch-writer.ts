import { CompiledQuery, type Kysely, sql } from 'kysely';
import { quoteArrayElement } from '../db/postgres-arrays.js';
import { touchLastUsed } from '../db/repositories/api-keys.js';
import { rollupUpsertSql } from '../db/repositories/usage-rollups.js';
import type { Database } from '../db/schema.js';
import { cellValue, lastUseByKey, type RowBatchMessage, textSlot } from './row-batch.js';
import { columnIsText, requestLogColumns } from './row-layout.js';
import {
  hourlyRollup,
  type RollupRow,
  type RollupTarget,
  rollupParameterCount,
  rollupParameters,
  rollupRowsFor,
  rollupTargets,
} from './usage-rollup.js';

/** Rollup rows per upsert: far below PostgreSQL's 65,535 parameters. */
const rollupRowsPerUpsert = 500;

/** Adds rollup rows to the target's table (the upsert adds to rows already there), in primary-key order. */
async function upsertRollups(db: Kysely<Database>, target: RollupTarget, rows: readonly RollupRow[]): Promise<void> {
  const { shape, table } = target;
  for (let first = 0; first < rows.length; first += rollupRowsPerUpsert) {
    const chunk = rows.slice(first, first + rollupRowsPerUpsert);
    const parameters: unknown[] = new Array(chunk.length * rollupParameterCount(shape));
    let at = 0;
    for (const row of chunk) at = rollupParameters(row, parameters, at, shape);
    let index = 0;
    const text = rollupUpsertSql(table, chunk.length, shape.keyColumns).replace(/\?/g, () => `$${++index}`);
    await db.executeQuery(CompiledQuery.raw(text, parameters));
  }
}

/**
 * A request-log batch on PostgreSQL: one `INSERT … SELECT * FROM unnest($1::text[], $2::int8[], …)` with one array
 * parameter per column, each written straight from the batch's columns (row-batch.ts) as PostgreSQL's array literal.
 * The event loop then builds one string per column per batch, a shared text (account, key, model…) quoted once per
 * batch, and the server unpacks the arrays on its own CPU. Why: docs/performance.md#the-request-log-store.
 */

/** Number columns that hold fractions; every other number column is an integer (int8 converts to int4 on insert). */
const fractionColumns: ReadonlySet<string> = new Set(['cost_usd']);

const insertStart = sql.raw(`insert into request_log (${requestLogColumns.join(', ')}) select * from unnest(`);
/** Each column's array type, in requestLogColumns order. */
const arrayTypes = requestLogColumns.map((column, position) =>
  sql.raw(columnIsText[position] === 1 ? '::text[]' : fractionColumns.has(column) ? '::float8[]' : '::int8[]'),
);

/** One array literal per column of requestLogColumns, holding the batch's rows in order. */
function arrayLiterals(batch: RowBatchMessage): string[] {
  // Quoted once per batch, by the text's slot: shared texts repeat on every row.
  const quoted: Array<string | undefined> = new Array(batch.strings.length);
  const literals: string[] = [];
  for (let column = 0; column < requestLogColumns.length; column++) {
    const isText = columnIsText[column] === 1;
    let literal = '{';
    for (let row = 0; row < batch.count; row++) {
      if (row > 0) literal += ',';
      if (!isText) {
        const value = cellValue(batch, row, column);
        literal += value === null ? 'NULL' : String(value);
        continue;
      }
      const slot = textSlot(batch, row, column);
      if (slot === -1) {
        literal += 'NULL';
        continue;
      }
      let element = quoted[slot];
      if (element === undefined) {
        element = quoteArrayElement(batch.strings[slot] as string);
        quoted[slot] = element;
      }
      literal += element;
    }
    literals.push(`${literal}}`);
  }
  return literals;
}

/** Inserts the batch, moves its keys' last-used times and adds it to the usage rollups, in one transaction. */
export async function writeRowBatchPostgres(db: Kysely<Database>, batch: RowBatchMessage): Promise<void> {
  const parameters = arrayLiterals(batch).map((literal, position) => sql`${literal}${arrayTypes[position]}`);
  await db.transaction().execute(async (transaction) => {
    await sql`${insertStart}${sql.join(parameters)})`.execute(transaction);
    for (const [keyId, at] of lastUseByKey(batch)) await touchLastUsed(transaction, keyId, at);
    const hourly = hourlyRollup(batch);
    for (const target of rollupTargets) await upsertRollups(transaction, target, rollupRowsFor(hourly, target));
  });
}
