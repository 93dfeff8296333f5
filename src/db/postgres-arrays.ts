/**
 * PostgreSQL array literals (`{"a",NULL,"b"}`), for batches written as one array parameter per column and unpacked by
 * `unnest` on the server: one string per column per batch on the event loop instead of a value per row and column
 * (docs/performance.md, "PostgreSQL from column arrays").
 */

/** A text as an element of an array literal: always quoted (so NULL, braces, commas and spaces stay text). */
export function quoteArrayElement(text: string): string {
  if (text.indexOf('"') === -1 && text.indexOf('\\') === -1) return `"${text}"`;
  return `"${text.replace(/[\\"]/g, '\\$&')}"`;
}

/** Texts (null: SQL NULL) as one array literal, in order. */
export function textArrayLiteral(values: ReadonlyArray<string | null>): string {
  let literal = '{';
  for (let index = 0; index < values.length; index++) {
    if (index > 0) literal += ',';
    const value = values[index] as string | null;
    literal += value === null ? 'NULL' : quoteArrayElement(value);
  }
  return `${literal}}`;
}
