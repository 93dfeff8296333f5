import type { RequestLogInsert } from '../db/repositories/request-log.js';
import {
  requestLogColumns,
  requestLogLayout,
  requestLogNumberColumns,
  requestLogTextColumns,
} from '../db/repositories/request-log-columns.js';

/**
 * Request-log rows waiting to be written, held as columns of plain numbers rather than as one object per row.
 *
 * Why: every request adds a row, and under load a batch of 500 fills in ~30 ms. Held as objects (31 properties each,
 * plus their strings) the rows lived through the young generation's collections and were copied and promoted, then
 * were flattened into one array of 15,500 values that crossed to the SQLite thread value by value. Here a row is
 * copied into two typed arrays the moment it is enqueued (numbers in one, text as indexes into the batch's list of
 * strings in the other) and the object dies young. Text that repeats from row to row (account, key, model, provider,
 * outcome...) is stored once per batch. What crosses to the SQLite thread is two typed arrays (one memory copy each)
 * and one array of strings.
 *
 * Absent values: NaN in a number column (SQLite stores a bound NaN as NULL, so this is what binding NaN did anyway),
 * -1 in a text column.
 */

const numberWidth = requestLogNumberColumns.length;
const textWidth = requestLogTextColumns.length;
const noText = -1;

/** What the SQLite thread receives for a batch (see db/sqlite-worker.ts, which decodes it the same way). */
export interface RowBatchMessage {
  count: number;
  numbers: Float64Array;
  texts: Int32Array;
  strings: string[];
}

export class RowBatch {
  /** Rows appended so far. */
  count = 0;
  /** Set once the batch is handed to the database: later rows go to the next batch. */
  sealed = false;
  private numbers: Float64Array;
  private texts: Int32Array;
  private readonly strings: string[] = [];
  /** Index in `strings` of each repeated text seen in this batch. */
  private readonly stringIndexes = new Map<string, number>();

  constructor(readonly capacity: number) {
    // Grown by doubling up to the capacity: a flush at low load writes a few rows, not a batch-sized allocation.
    const initial = Math.min(capacity, 64);
    this.numbers = new Float64Array(initial * numberWidth);
    this.texts = new Int32Array(initial * textWidth);
  }

  static of(rows: readonly RequestLogInsert[]): RowBatch {
    const batch = new RowBatch(Math.max(1, rows.length));
    for (const row of rows) batch.append(row);
    return batch;
  }

  get full(): boolean {
    return this.count >= this.capacity;
  }

  /**
   * Copies a row in. The columns are written out one by one, in the order of requestLogNumberColumns and
   * requestLogTextColumns (fixed property reads, several times cheaper than reading by name in a loop; a unit test
   * round-trips every column).
   */
  append(row: RequestLogInsert): void {
    if (this.count * numberWidth === this.numbers.length) this.grow();
    const numbers = this.numbers;
    let at = this.count * numberWidth;
    numbers[at++] = row.created_at;
    numbers[at++] = row.status;
    numbers[at++] = row.stream;
    numbers[at++] = row.latency_ms;
    numbers[at++] = row.ttft_ms ?? Number.NaN;
    numbers[at++] = row.prompt_tokens ?? Number.NaN;
    numbers[at++] = row.completion_tokens ?? Number.NaN;
    numbers[at++] = row.cached_tokens ?? Number.NaN;
    numbers[at++] = row.reasoning_tokens ?? Number.NaN;
    numbers[at++] = row.total_tokens ?? Number.NaN;
    numbers[at++] = row.usage_estimated ?? 0;
    numbers[at++] = row.cost_usd ?? Number.NaN;
    numbers[at++] = row.attempt_count ?? Number.NaN;
    numbers[at++] = row.cache_write_tokens ?? Number.NaN;
    numbers[at++] = row.served_latency_ms ?? Number.NaN;
    const texts = this.texts;
    at = this.count * textWidth;
    texts[at++] = this.once(row.request_id);
    texts[at++] = this.shared(row.account_id);
    texts[at++] = this.shared(row.key_id);
    texts[at++] = this.shared(row.key_name);
    texts[at++] = this.shared(row.model);
    texts[at++] = this.shared(row.provider);
    texts[at++] = this.shared(row.upstream_model);
    texts[at++] = this.shared(row.outcome);
    texts[at++] = this.shared(row.error_type);
    texts[at++] = this.shared(row.error_code);
    texts[at++] = this.once(row.error_message);
    texts[at++] = this.shared(row.user_agent);
    texts[at++] = this.once(row.request_body);
    texts[at++] = this.once(row.response_body);
    texts[at++] = this.shared(row.served_model);
    texts[at++] = this.shared(row.deployment);
    texts[at++] = this.once(row.attempts);
    this.count++;
  }

  /** The batch as the SQLite thread takes it. */
  message(): RowBatchMessage {
    return {
      count: this.count,
      numbers: this.numbers.subarray(0, this.count * numberWidth),
      texts: this.texts.subarray(0, this.count * textWidth),
      strings: this.strings,
    };
  }

  /** The rows as objects again (PostgreSQL's writer, rows set aside in a file, rows written one by one). */
  rows(): RequestLogInsert[] {
    return decodeRows(this.message());
  }

  /** Text that differs on nearly every row (ids, messages, bodies): stored as it is. */
  private once(text: string | null | undefined): number {
    if (text === null || text === undefined) return noText;
    return this.strings.push(text) - 1;
  }

  /** Text that repeats from row to row: stored once per batch. */
  private shared(text: string | null | undefined): number {
    if (text === null || text === undefined) return noText;
    let index = this.stringIndexes.get(text);
    if (index === undefined) {
      index = this.strings.push(text) - 1;
      this.stringIndexes.set(text, index);
    }
    return index;
  }

  private grow(): void {
    const rows = Math.min(this.capacity, Math.max(1, this.count * 2));
    const numbers = new Float64Array(rows * numberWidth);
    numbers.set(this.numbers);
    this.numbers = numbers;
    const texts = new Int32Array(rows * textWidth);
    texts.set(this.texts);
    this.texts = texts;
  }
}

function decodeRows(batch: RowBatchMessage): RequestLogInsert[] {
  const rows: RequestLogInsert[] = [];
  for (let index = 0; index < batch.count; index++) {
    const row: Record<string, unknown> = {};
    for (let position = 0; position < requestLogColumns.length; position++) {
      const [kind, place] = requestLogLayout[position] as readonly [0 | 1, number];
      if (kind === 0) {
        const value = batch.numbers[index * numberWidth + place] as number;
        row[requestLogColumns[position] as string] = Number.isNaN(value) ? null : value;
      } else {
        const text = batch.texts[index * textWidth + place] as number;
        row[requestLogColumns[position] as string] = text === noText ? null : batch.strings[text];
      }
    }
    rows.push(row as unknown as RequestLogInsert);
  }
  return rows;
}
