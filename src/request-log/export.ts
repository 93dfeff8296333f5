import { Readable } from 'node:stream';
import { stringify } from 'csv-stringify';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { type LogEntry, toLogEntry } from './entry.js';
import { type RequestLogCursor, type RequestLogFilter, type RequestLogSummaryRow, searchRequestLog } from './search.js';

/**
 * Streamed exports of the request log (CSV or JSON Lines), newest first, of any size. The rows are read in keyset
 * pages of `pageSize` (the log's own index walk, as the console's "load older" does) and the next page is read only
 * when the client has taken the previous one: the response stream pulls, so memory holds a page or two whatever the
 * export's size, and a client that stops reading stops the reads. Pages rather than one long-lived cursor: SQLite's
 * connection is shared by the whole server (an open iterator would make it busy for every other query) and a
 * snapshot held for minutes would keep WAL checkpoints from completing; each page is a short query of its own.
 */

export type ExportFormat = 'csv' | 'jsonl';

export const exportContentTypes: Record<ExportFormat, string> = {
  csv: 'text/csv; charset=utf-8',
  jsonl: 'application/x-ndjson; charset=utf-8',
};

const defaultPageSize = 1000;

/** Every row the filter selects, newest first, a page at a time. */
export async function* requestLogPages(
  db: Kysely<Database>,
  filter: RequestLogFilter,
  pageSize = defaultPageSize,
): AsyncGenerator<RequestLogSummaryRow[]> {
  let before: RequestLogCursor | undefined;
  for (;;) {
    const rows = await searchRequestLog(db, { ...filter, limit: pageSize, before });
    if (rows.length > 0) yield rows;
    if (rows.length < pageSize) return;
    const last = rows[rows.length - 1] as RequestLogSummaryRow;
    before = { createdAt: Number(last.created_at), id: Number(last.id) };
  }
}

/** The CSV columns: one per field of a log entry, nested ones flattened. */
const csvColumns: Array<[string, (entry: LogEntry) => unknown]> = [
  ['time', (entry) => entry.time],
  ['request_id', (entry) => entry.requestId],
  ['account_id', (entry) => entry.accountId],
  ['key_id', (entry) => entry.keyId],
  ['key_name', (entry) => entry.keyName],
  ['endpoint', (entry) => entry.endpoint],
  ['model', (entry) => entry.model],
  ['served_model', (entry) => entry.servedModel],
  ['provider', (entry) => entry.provider],
  ['upstream_model', (entry) => entry.upstreamModel],
  ['deployment', (entry) => entry.deployment],
  ['attempt_count', (entry) => entry.attemptCount],
  ['status', (entry) => entry.status],
  ['outcome', (entry) => entry.outcome],
  ['error_type', (entry) => entry.error?.type],
  ['error_code', (entry) => entry.error?.code],
  ['error_message', (entry) => entry.error?.message],
  ['stream', (entry) => entry.stream],
  ['latency_ms', (entry) => entry.latencyMs],
  ['ttft_ms', (entry) => entry.ttftMs],
  ['prompt_tokens', (entry) => entry.usage.promptTokens],
  ['completion_tokens', (entry) => entry.usage.completionTokens],
  ['total_tokens', (entry) => entry.usage.totalTokens],
  ['cached_tokens', (entry) => entry.usage.cachedTokens],
  ['cache_write_tokens', (entry) => entry.usage.cacheWriteTokens],
  ['reasoning_tokens', (entry) => entry.usage.reasoningTokens],
  ['usage_estimated', (entry) => entry.usage.estimated],
  ['cost_usd', (entry) => entry.costUsd],
  ['user_agent', (entry) => entry.userAgent],
];

/**
 * Client-controlled text (model names, user agents, error messages) starting with = + - @, a tab or a carriage return
 * would run as a formula when the CSV is opened in a spreadsheet: such text gets a leading apostrophe (OWASP's advice).
 * Numbers are left as they are.
 */
function spreadsheetSafe(value: unknown): unknown {
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(value)) return `'${value}`;
  return value;
}

/**
 * Records as a byte stream in the format: CSV with a header row (csv-stringify), or one JSON object per line. The
 * records come from an async iterable of pages, read only as fast as the stream is consumed.
 */
export function formatRecords<Record>(
  pages: AsyncIterable<Record[]>,
  format: ExportFormat,
  columns: ReadonlyArray<readonly [string, (record: Record) => unknown]>,
  asJson: (record: Record) => unknown,
): Readable {
  if (format === 'jsonl') {
    return Readable.from(
      (async function* () {
        for await (const page of pages) {
          let text = '';
          for (const record of page) text += `${JSON.stringify(asJson(record))}\n`;
          yield text;
        }
      })(),
      { objectMode: false },
    );
  }
  const records = Readable.from(
    (async function* () {
      for await (const page of pages) {
        for (const record of page) yield columns.map(([, pick]) => spreadsheetSafe(pick(record)));
      }
    })(),
  );
  const csv = stringify({
    header: true,
    // Every text field in double quotes: a spreadsheet that splits the file at ';' (the list separator of many
    // locales) or at tabs would otherwise start a new cell, perhaps a formula, inside a field such as "gpt;=1+1".
    quoted_string: true,
    columns: columns.map(([name]) => name),
    cast: { boolean: (value) => (value ? 'true' : 'false') },
  });
  records.on('error', (error) => csv.destroy(error));
  csv.on('close', () => records.destroy());
  return records.pipe(csv);
}

/** The filtered log as CSV or JSON Lines (the entries the log API returns, without attempts in CSV). */
export function exportRequestLog(db: Kysely<Database>, filter: RequestLogFilter, format: ExportFormat): Readable {
  const entries = (async function* () {
    for await (const page of requestLogPages(db, filter)) yield page.map(toLogEntry);
  })();
  return formatRecords(entries, format, csvColumns, (entry) => entry);
}
