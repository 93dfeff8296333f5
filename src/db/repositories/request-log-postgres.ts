import { type Kysely, sql } from 'kysely';
import type { RowBatchMessage } from '../../request-log/row-batch.js';
import type { Database } from '../schema.js';
import { touchLastUsed } from './api-keys.js';
import {
  requestLogColumns,
  requestLogLayout,
  requestLogNumberColumns,
  requestLogTextColumns,
} from './request-log-columns.js';

/**
 * A batch of request-log rows on PostgreSQL: one `INSERT … SELECT * FROM unnest($1::text[], $2::int8[], …)` with one
 * array parameter per column, each written straight from the batch's columns (request-log/row-batch.ts) as
 * PostgreSQL's array literal.
 *
 * Why: the Kysely multi-row insert it replaces built a query of 32 values per row (16,000 for a batch of 500), compiled
 * it to SQL and had pg serialize every value, on the event loop: `perf` charged ~15 µs per request to it (Kysely's
 * compiler, pg's serializer and buffer writer, the rows rebuilt as objects, and their garbage), more than the SQLite
 * thread's whole insert. Here the event loop builds 32 strings per batch, a shared text (account, key, model…) quoted
 * once per batch, and the server unpacks the arrays on its own CPU.
 */

/** Number columns that hold fractions; every other number column is an integer (int8 converts to int4 on insert). */
const fractionColumns: ReadonlySet<string> = new Set(['cost_usd']);

const numberWidth = requestLogNumberColumns.length;
const textWidth = requestLogTextColumns.length;
const insertStart = sql.raw(`insert into request_log (${requestLogColumns.join(', ')}) select * from unnest(`);
/** Each column's array type, in requestLogColumns order. */
const arrayTypes = requestLogColumns.map((column, position) =>
  sql.raw(requestLogLayout[position]?.[0] === 1 ? '::text[]' : fractionColumns.has(column) ? '::float8[]' : '::int8[]'),
);

/** A text as an element of an array literal: always quoted (so NULL, braces, commas and spaces stay text). */
function quoteArrayElement(text: string): string {
  if (text.indexOf('"') === -1 && text.indexOf('\\') === -1) return `"${text}"`;
  return `"${text.replace(/[\\"]/g, '\\$&')}"`;
}

/** One array literal per column of requestLogColumns, holding the batch's rows in order. */
function requestLogArrayLiterals(batch: RowBatchMessage): string[] {
  const { count, numbers, texts, strings } = batch;
  // Quoted once per batch: shared texts (account, key, model, outcome…) repeat on every row.
  const quoted: Array<string | undefined> = new Array(strings.length);
  const literals: string[] = [];
  for (const [kind, place] of requestLogLayout) {
    let literal = '{';
    for (let row = 0; row < count; row++) {
      if (row > 0) literal += ',';
      if (kind === 0) {
        const value = numbers[row * numberWidth + place] as number;
        // NaN marks an absent number in a batch.
        literal += Number.isNaN(value) ? 'NULL' : String(value);
      } else {
        const index = texts[row * textWidth + place] as number;
        if (index === -1) {
          literal += 'NULL';
        } else {
          let element = quoted[index];
          if (element === undefined) {
            element = quoteArrayElement(strings[index] as string);
            quoted[index] = element;
          }
          literal += element;
        }
      }
    }
    literals.push(`${literal}}`);
  }
  return literals;
}

/** Each key's latest use among the batch's rows (what api_keys.last_used_at is moved forward to). */
function lastUseOfBatch(batch: RowBatchMessage): Map<string, number> {
  const keyPlace = requestLogTextColumns.indexOf('key_id');
  const createdAtPlace = requestLogNumberColumns.indexOf('created_at');
  const lastUse = new Map<string, number>();
  for (let row = 0; row < batch.count; row++) {
    const key = batch.strings[batch.texts[row * textWidth + keyPlace] as number] as string;
    const at = batch.numbers[row * numberWidth + createdAtPlace] as number;
    if (!((lastUse.get(key) ?? -1) >= at)) lastUse.set(key, at);
  }
  return lastUse;
}

/** Inserts the batch and moves its keys' last-used times, in one transaction. */
export async function writeRowBatchPostgres(db: Kysely<Database>, batch: RowBatchMessage): Promise<void> {
  const parameters = requestLogArrayLiterals(batch).map((literal, position) => sql`${literal}${arrayTypes[position]}`);
  await db.transaction().execute(async (transaction) => {
    await sql`${insertStart}${sql.join(parameters)})`.execute(transaction);
    for (const [keyId, at] of lastUseOfBatch(batch)) await touchLastUsed(transaction, keyId, at);
  });
}
