import { serialize } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { type RequestLogInsert, requestLogColumns, requestLogValues } from '../../src/db/repositories/request-log.js';

describe('request-log values for the prepared INSERTs', () => {
  it('lists every column, in requestLogColumns order', () => {
    // A row whose every value is its own column's name: flattened, it must read as the column list itself.
    const row = Object.fromEntries(requestLogColumns.map((column) => [column, column])) as unknown as RequestLogInsert;
    expect(requestLogValues([row, row])).toEqual([...requestLogColumns, ...requestLogColumns]);
  });

  it('writes null for absent optional columns and 0 for an absent usage_estimated', () => {
    const row = { request_id: 'req_1', created_at: 1 } as unknown as RequestLogInsert;
    const values = requestLogValues([row]);
    expect(values).toHaveLength(requestLogColumns.length);
    expect(values[requestLogColumns.indexOf('usage_estimated')]).toBe(0);
    expect(values[requestLogColumns.indexOf('attempts')]).toBeNull();
  });

  it('is a packed array, which postMessage clones element by element', () => {
    // V8's serializer (structured clone) writes an array with holes as a sparse one, key by key: 3x slower both ways
    // for a 500-row batch. Its first tag after the two header bytes says which way it went: 'A' dense, 'a' sparse.
    const row = { request_id: 'req_1', created_at: 1 } as unknown as RequestLogInsert;
    const tag = (value: unknown) => String.fromCharCode(serialize(value)[2] ?? 0);
    expect(tag(new Array(3))).toBe('a');
    expect(tag(requestLogValues([row, row, row]))).toBe('A');
  });
});

describe('request-log values across batches of different sizes', () => {
  it('has exactly the batch values, whatever size the previous batch was', () => {
    const row = { request_id: 'req_1', created_at: 1 } as unknown as RequestLogInsert;
    const width = requestLogColumns.length;
    expect(requestLogValues(Array.from({ length: 7 }, () => row))).toHaveLength(7 * width);
    const two = requestLogValues([row, { ...row, request_id: 'req_2' }]);
    expect(two).toHaveLength(2 * width);
    expect(two[width]).toBe('req_2');
    expect(two.filter((value) => value === 'req_1')).toHaveLength(1);
  });
});
