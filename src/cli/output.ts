/** Printing for the CLI: JSON with --json (for scripts), aligned tables and plain lines otherwise. */

export interface Output {
  json: boolean;
  write(text: string): void;
}

export function consoleOutput(json: boolean): Output {
  return { json, write: (text) => process.stdout.write(text.endsWith('\n') ? text : `${text}\n`) };
}

export function printJson(output: Output, value: unknown): void {
  output.write(JSON.stringify(value, null, 2));
}

export function formatTable(headers: readonly string[], rows: ReadonlyArray<ReadonlyArray<string>>): string {
  const widths = headers.map((header, column) =>
    Math.max(header.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => cell.padEnd(widths[column] ?? 0))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}

export function printTable(
  output: Output,
  headers: readonly string[],
  rows: ReadonlyArray<ReadonlyArray<string>>,
): void {
  output.write(rows.length === 0 ? '(none)' : formatTable(headers, rows));
}

/** A `--models` list; an empty one (an unset shell variable) would silently allow no model at all. */
export function modelList(text: string, flag = '--models'): string[] {
  const models = splitList(text);
  if (models.length === 0) throw new Error(`${flag} names no model; give at least one (or leave ${flag} out)`);
  return models;
}

/** "a,b , c" -> ["a","b","c"] */
export function splitList(text: string): string[] {
  return text
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item.length > 0);
}
