import { describe, expect, it } from 'vitest';
import {
  type RequestLogInsert,
  requestLogColumns,
  requestLogNumberColumns,
  requestLogTextColumns,
  requestLogValues,
} from '../../src/db/repositories/request-log.js';
import { RowBatch } from '../../src/request-log/row-batch.js';

/** A row with a value of its own in every column: numbers by position, text named after its column and row. */
function fullRow(index: number): RequestLogInsert {
  const row: Record<string, unknown> = {};
  for (const [position, column] of requestLogColumns.entries()) {
    row[column] = (requestLogNumberColumns as readonly string[]).includes(column)
      ? index * 1000 + position + 0.5
      : `${column}-${index}`;
  }
  return row as unknown as RequestLogInsert;
}

describe('request-log row batches', () => {
  it('splits the columns exactly into number and text columns', () => {
    expect([...requestLogNumberColumns, ...requestLogTextColumns].sort()).toEqual([...requestLogColumns].sort());
  });

  it('gives back every column of every row as it was appended', () => {
    const rows = Array.from({ length: 3 }, (_, index) => fullRow(index));
    expect(RowBatch.of(rows).rows()).toEqual(rows);
  });

  it('gives back null for absent values and 0 for an absent usage_estimated', () => {
    const row = { request_id: 'req_1', created_at: 1, account_id: 'acct_1', key_id: 'key_1' } as RequestLogInsert;
    const [back] = RowBatch.of([row]).rows();
    for (const column of requestLogColumns) {
      if (column in row) expect(back?.[column]).toBe(row[column]);
      else if (column === 'usage_estimated') expect(back?.[column]).toBe(0);
      else expect(back?.[column]).toBeNull();
    }
  });

  it('stores repeated text once per batch and text that differs per row as it comes', () => {
    const rows = Array.from({ length: 10 }, (_, index) => ({ ...fullRow(index), account_id: 'acct_same' }));
    const message = RowBatch.of(rows).message();
    expect(message.strings.filter((text) => text === 'acct_same')).toHaveLength(1);
    expect(message.strings.filter((text) => text.startsWith('request_id-'))).toHaveLength(10);
    expect(RowBatch.of(rows).rows()).toEqual(rows);
  });

  it('grows past its first allocation up to its capacity, and says when it is full', () => {
    const batch = new RowBatch(200);
    const rows = Array.from({ length: 200 }, (_, index) => fullRow(index));
    for (const row of rows) {
      expect(batch.full).toBe(false);
      batch.append(row);
    }
    expect(batch.full).toBe(true);
    expect(batch.count).toBe(200);
    expect(batch.rows()).toEqual(rows);
    const message = batch.message();
    expect(message.numbers).toBeInstanceOf(Float64Array);
    expect(message.numbers).toHaveLength(200 * requestLogNumberColumns.length);
    expect(message.texts).toHaveLength(200 * requestLogTextColumns.length);
  });

  it('flattens rows in requestLogColumns order for the prepared INSERTs', () => {
    const rows = [fullRow(1), fullRow(2)];
    expect(requestLogValues(rows)).toEqual(rows.flatMap((row) => requestLogColumns.map((column) => row[column])));
  });
});
