/**
 * PostgreSQL array literals (`{"a",NULL,"b"}`), for batches written as one array parameter per column and unpacked by
 * `unnest` on the server: one string per column per batch on the event loop instead of a value per row and column
 * (docs/performance.md, "PostgreSQL from column arrays").
 */

/** Control characters: JSON.stringify writes them as `\n`, `\u0001`…, which an array literal would read as `n`, `u0001`. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding them is the point.
const controlCharacter = /[\u0000-\u001f]/;

/** A text as an element of an array literal: always quoted (so NULL, braces, commas and spaces stay text). */
export function quoteArrayElement(text: string): string {
  if (text.indexOf('"') === -1 && text.indexOf('\\') === -1) return `"${text}"`;
  // Without control characters and lone surrogates, JSON's quoting is the array literal's (only `"` and `\` get a
  // backslash), and natively ~2× faster than a replace on JSON texts full of quotes (stored responses' items).
  if (!controlCharacter.test(text) && text.isWellFormed()) return JSON.stringify(text);
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

/** Integers as one array literal (for `::int8[]` or `::int4[]`), in order. */
export function integerArrayLiteral(values: readonly number[]): string {
  return `{${values.join(',')}}`;
}
