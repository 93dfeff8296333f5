import {
  columnIsText,
  columnPlaces,
  createdAtPlace,
  keyIdPlace,
  numberColumnCount,
  type RequestLogInsert,
  requestLogColumns,
  textColumnCount,
} from './row-layout.js';

/**
 * Request-log rows waiting to be written, held as columns of plain numbers rather than as one object per row, and the
 * one reader of that form (cellValue, textSlot, lastUseByKey) that the writers on both engines decode it with.
 *
 * A row is copied into two typed arrays the moment it is enqueued (numbers in one, text as an index into the batch's
 * list of strings in the other) and its object dies young; text that repeats from row to row (account, key, model,
 * outcome...) is stored once per batch. What crosses to the SQLite thread is two typed arrays and one array of strings.
 * Why, with the measurements: docs/performance.md#the-request-log-store.
 *
 * Absent values: NaN in a number column (SQLite stores a bound NaN as NULL anyway), -1 in a text column.
 */

const noText = -1;
// The layout under local names: read for every row appended and every cell decoded, and a module's own bindings are
// cheaper to read than imported ones.
const isText = columnIsText;
const places = columnPlaces;
const numberWidth = numberColumnCount;
const textWidth = textColumnCount;

/** A batch as it crosses to the SQLite thread and as the writers read it. */
export interface RowBatchMessage {
  count: number;
  /** Each row's numbers in turn, in requestLogNumberColumns order. */
  numbers: Float64Array;
  /** Each row's texts in turn as indexes into `strings`, in requestLogTextColumns order. */
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
   * requestLogTextColumns: fixed property reads are several times cheaper than reading by name in a loop, and a unit
   * test round-trips every column.
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
    texts[at++] = this.shared(row.endpoint);
    this.count++;
  }

  /** The batch as the writers take it (and as it is posted to the SQLite thread). */
  message(): RowBatchMessage {
    return {
      count: this.count,
      numbers: this.numbers.subarray(0, this.count * numberWidth),
      texts: this.texts.subarray(0, this.count * textWidth),
      strings: this.strings,
    };
  }

  /** The rows as objects again (rows set aside in a file, rows written one by one). */
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

/**
 * For a text column, where row `row`'s text is in batch.strings (-1 when absent). A text shared by several rows has
 * one slot, so a writer can do its work once per distinct text.
 */
export function textSlot(batch: RowBatchMessage, row: number, column: number): number {
  return batch.texts[row * textWidth + (places[column] as number)] as number;
}

/**
 * Row `row`'s value in column `column` (a position in requestLogColumns): its number or text, or null. The SQLite
 * writer calls it for every cell of a batch, so it reads the slot itself rather than through textSlot.
 */
export function cellValue(batch: RowBatchMessage, row: number, column: number): number | string | null {
  const place = places[column] as number;
  if (isText[column] === 1) {
    const slot = batch.texts[row * textWidth + place] as number;
    return slot === noText ? null : (batch.strings[slot] as string);
  }
  const value = batch.numbers[row * numberWidth + place] as number;
  // NaN marks an absent number.
  return Number.isNaN(value) ? null : value;
}

/** Each key's latest use among the batch's rows: what api_keys.last_used_at is moved forward to. */
export function lastUseByKey(batch: RowBatchMessage): Map<string, number> {
  const { count, numbers, texts, strings } = batch;
  const lastUse = new Map<string, number>();
  for (let row = 0; row < count; row++) {
    const key = strings[texts[row * textWidth + keyIdPlace] as number] as string;
    const at = numbers[row * numberWidth + createdAtPlace] as number;
    if (!((lastUse.get(key) ?? Number.NEGATIVE_INFINITY) >= at)) lastUse.set(key, at);
  }
  return lastUse;
}

function decodeRows(batch: RowBatchMessage): RequestLogInsert[] {
  const rows: RequestLogInsert[] = [];
  for (let row = 0; row < batch.count; row++) {
    const decoded: Record<string, unknown> = {};
    for (let column = 0; column < requestLogColumns.length; column++) {
      decoded[requestLogColumns[column] as string] = cellValue(batch, row, column);
    }
    rows.push(decoded as unknown as RequestLogInsert);
  }
  return rows;
}
