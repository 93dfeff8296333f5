import { describe, expect, it } from 'vitest';
import { cellValue, lastUseByKey, RowBatch } from '../../src/request-log/row-batch.js';
import {
  type RequestLogInsert,
  requestLogColumns,
  requestLogNumberColumns,
  requestLogTextColumns,
} from '../../src/request-log/row-layout.js';
import { insertionOrder } from '../../src/request-log/sqlite-batch-writer.js';

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

  it('reads each cell in requestLogColumns order, as the SQLite statements bind them', () => {
    const rows = [fullRow(1), { ...fullRow(2), provider: null, ttft_ms: null }];
    const message = RowBatch.of(rows).message();
    rows.forEach((row, index) => {
      const values = requestLogColumns.map((_, column) => cellValue(message, index, column));
      expect(values).toEqual(requestLogColumns.map((column) => row[column] ?? null));
    });
  });

  it("gives each key's latest use in the batch, whatever the order of its rows", () => {
    const rows = [
      { ...fullRow(0), key_id: 'key_a', created_at: 30 },
      { ...fullRow(1), key_id: 'key_b', created_at: 10 },
      { ...fullRow(2), key_id: 'key_a', created_at: 20 },
      { ...fullRow(3), key_id: 'key_b', created_at: 40 },
    ];
    expect(lastUseByKey(RowBatch.of(rows).message())).toEqual(
      new Map([
        ['key_a', 30],
        ['key_b', 40],
      ]),
    );
  });

  it('orders rows for insertion account by account, key by key, each group in arrival order', () => {
    const accounts = ['acct_b', 'acct_a', 'acct_b', 'acct_c', 'acct_a', 'acct_b'];
    const keys = ['key_2', 'key_1', 'key_1', 'key_3', 'key_1', 'key_2'];
    const rows = accounts.map((account, index) => ({
      ...fullRow(index),
      account_id: account,
      key_id: keys[index] ?? '',
    }));
    const order = [...insertionOrder(RowBatch.of(rows).message())];
    // acct_b first seen first, then acct_a, then acct_c; within acct_b, key_2 (first seen) before key_1.
    expect(order).toEqual([0, 5, 2, 1, 4, 3]);
    const single = rows.map((row) => ({ ...row, account_id: 'acct_same' }));
    expect([...insertionOrder(RowBatch.of(single).message())]).toEqual([0, 1, 2, 3, 4, 5]);
  });
});
