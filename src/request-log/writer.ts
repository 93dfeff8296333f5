import { readdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ensureDirectory } from '../config/data-directory.js';
import type { DatabaseHandle } from '../db/connect.js';
import { requestIdsPresent } from '../db/repositories/request-log.js';
import type { Logger } from '../observability/logger.js';
import { createRequestLogBatchWriter, type RequestLogBatchWriter } from './batch-writer.js';
import { RowBatch } from './row-batch.js';
import type { RequestLogInsert } from './row-layout.js';
import type { SqliteWorker } from './sqlite-worker.js';

/**
 * Where request-log rows are written. Requests enqueue and never wait for the database: a batch is written when it
 * reaches batchSize, and no row waits longer than flushInterval, in one transaction that also records each key's last use. A failed
 * write keeps its rows and is retried with backoff. When the queue is full, new requests wait for room
 * (backpressure) instead of rows being dropped. At shutdown whatever cannot be written in time is spilled to a file
 * in the data directory and written at the next start: nothing accepted is lost.
 */

export interface RequestLogWriterOptions {
  database: DatabaseHandle;
  logger: Logger;
  batchSize: number;
  flushIntervalMs: number;
  maxQueue: number;
  spillDir: string;
  /** Where SQLite batches are written off the event loop (see sqlite-worker.ts). */
  sqliteWorker?: SqliteWorker | undefined;
  onWritten?: (rows: number) => void;
  onFlushFailure?: () => void;
}

const maxRetryDelayMs = 5_000;

export class RequestLogWriter {
  /**
   * Rows waiting, in batches of up to batchSize (row-batch.ts: a row is copied in when enqueued and its
   * object let go of). Only the last batch takes new rows; the ones before it are full or sealed by a flush.
   */
  private batches: RowBatch[] = [];
  /** Rows in `batches`. */
  private queued = 0;
  private flushing: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private capacityWaiters: Array<() => void> = [];
  private retryDelayMs = 0;
  private nextAttemptAt = 0;
  /**
   * Batches at the head of the queue that a flush asked for: written even when they are not full. Only what was
   * queued when the flush was asked for (a flush seals the batch that was taking rows): rows arriving while it writes
   * wait for a full batch or the next flush, because draining until the queue is empty never ends under steady load
   * (docs/performance.md#the-request-log-store).
   */
  private owed = 0;
  private closed = false;
  private started = false;
  private readonly writeRows: RequestLogBatchWriter;

  constructor(private readonly options: RequestLogWriterOptions) {
    this.writeRows = createRequestLogBatchWriter(options.database, options.sqliteWorker);
  }

  /** Rows queued, not yet written. */
  get depth(): number {
    return this.queued;
  }

  /**
   * From now on rows are written at most flushInterval after they were queued. The timer runs only while rows wait:
   * an idle server has none to wake up for.
   */
  start(): void {
    this.started = true;
    this.scheduleFlush();
  }

  private scheduleFlush(): void {
    if (!this.started || this.closed || this.timer !== undefined || this.queued === 0) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      // Rows left (a failed write, or rows that arrived during it) get the next interval.
      void this.flush().finally(() => this.scheduleFlush());
    }, this.options.flushIntervalMs);
    this.timer.unref();
  }

  enqueue(row: RequestLogInsert): void {
    let open = this.batches[this.batches.length - 1];
    if (open === undefined || open.sealed || open.full) {
      open = new RowBatch(this.options.batchSize);
      this.batches.push(open);
    }
    open.append(row);
    this.queued++;
    if (this.timer === undefined) this.scheduleFlush();
    if (open.full && !this.flushing) {
      // Under load only full batches are written: each batch costs a commit whatever its size, so a few rows at a
      // time cost several times as much per row. What is left goes at the next interval (or at flush()).
      void this.startDrain();
    }
  }

  /** undefined when there is room (the common case, no promise allocated); otherwise resolves when there is. */
  waitForCapacity(): Promise<void> | undefined {
    if (this.queued < this.options.maxQueue) return undefined;
    void this.flush();
    return new Promise((resolve) => this.capacityWaiters.push(resolve));
  }

  /**
   * Writes everything queued now, full batch or not (single flight: a write under way takes these rows on too). Rows
   * that arrive meanwhile are not waited for.
   */
  flush(): Promise<void> {
    const open = this.batches[this.batches.length - 1];
    if (open) open.sealed = true;
    this.owed = this.batches.length;
    // A drain that has just decided to stop has not settled yet: start another once it has.
    if (this.flushing) return this.flushing.then(() => (this.owed > 0 ? this.startDrain() : undefined));
    return this.startDrain();
  }

  /**
   * Resolves once no write is under way: the rows being written are in the database (or kept, the write having
   * failed). Rows waiting for a full batch or the next interval stay queued; `flush()` writes those.
   */
  async whenIdle(): Promise<void> {
    while (this.flushing) await this.flushing.catch(() => {});
  }

  private startDrain(): Promise<void> {
    if (this.flushing) return this.flushing;
    if (this.queued === 0 || Date.now() < this.nextAttemptAt) return Promise.resolve();
    this.flushing = this.drain().finally(() => {
      this.flushing = undefined;
    });
    return this.flushing;
  }

  private async drain(): Promise<void> {
    for (;;) {
      const batch = this.batches[0];
      if (batch === undefined || !(this.owed > 0 || batch.full)) return;
      // No more rows into a batch being written.
      batch.sealed = true;
      try {
        await this.writeRows(batch);
      } catch (error) {
        // One row the database refuses (bad data) must not hold every row behind it forever: when rows written one
        // at a time succeed, the database is fine and the rows that still fail are set aside in a file.
        if (batch.count > 1 && (await this.isolateRejectedRows(batch, error))) continue;
        this.retryDelayMs = Math.min(maxRetryDelayMs, Math.max(100, this.retryDelayMs * 2));
        this.nextAttemptAt = Date.now() + this.retryDelayMs;
        this.options.onFlushFailure?.();
        this.options.logger.warn(
          { err: error, queued: this.queued, retryInMs: this.retryDelayMs },
          'request-log write failed; rows kept and retried',
        );
        return;
      }
      this.removeHead(batch.count);
      this.retryDelayMs = 0;
      this.nextAttemptAt = 0;
      this.options.onWritten?.(batch.count);
      this.releaseWaiters();
    }
  }

  /** The head batch is done with (written, or its refused rows set aside). */
  private removeHead(rows: number): void {
    this.batches.shift();
    this.queued -= rows;
    this.owed = Math.max(0, this.owed - 1);
  }

  /** Writes the batch row by row; true when that settled it (some rows written, the refused ones set aside). */
  private async isolateRejectedRows(batch: RowBatch, batchError: unknown): Promise<boolean> {
    const rejected: RequestLogInsert[] = [];
    const beforeAnySuccess: RequestLogInsert[] = [];
    let written = 0;
    // A row counts as refused only when it failed after another row was written: the database was answering.
    for (const row of batch.rows()) {
      try {
        await this.writeBatch([row]);
        written++;
      } catch {
        (written > 0 ? rejected : beforeAnySuccess).push(row);
      }
    }
    if (written === 0) return false;
    // Rows that failed before the database answered get one more try, now that it does.
    for (const row of beforeAnySuccess) {
      try {
        await this.writeBatch([row]);
        written++;
      } catch {
        rejected.push(row);
      }
    }
    this.removeHead(batch.count);
    this.options.onWritten?.(written);
    if (rejected.length > 0) {
      this.setAside(
        rejected.map((row) => JSON.stringify(row)),
        'the database refused some request-log rows; they were set aside in a file so the others are not held up',
        { err: batchError },
      );
    }
    this.releaseWaiters();
    return true;
  }

  /** Writes lines to a `.rejected` file in the spill directory (never read back) and logs `message` with its path. */
  private setAside(lines: string[], message: string, fields: Record<string, unknown> = {}): void {
    ensureDirectory(this.options.spillDir, 'the request-log spill directory');
    const file = path.join(this.options.spillDir, `rejected-${Date.now()}-${process.pid}.jsonl.rejected`);
    writeFileSync(file, `${lines.join('\n')}\n`, { mode: 0o600 });
    this.options.logger.error({ ...fields, rows: lines.length, file }, message);
  }

  private releaseWaiters(): void {
    while (this.capacityWaiters.length > 0 && this.queued < this.options.maxQueue) {
      this.capacityWaiters.shift()?.();
    }
  }

  private writeBatch(rows: readonly RequestLogInsert[]): Promise<void> {
    return this.writeRows(RowBatch.of(rows));
  }

  /**
   * Writes rows spilled by an earlier shutdown; files are removed only once their rows are in the database. A process
   * killed between writing a file's rows and removing it leaves the file behind: rows already in the log (same request
   * id) are skipped, so the next start writes nothing twice.
   */
  async recoverSpills(): Promise<number> {
    let recovered = 0;
    let files: string[];
    try {
      files = readdirSync(this.options.spillDir).filter((file) => file.endsWith('.jsonl'));
    } catch {
      return 0;
    }
    for (const file of files.sort()) {
      const fullPath = path.join(this.options.spillDir, file);
      const rows: RequestLogInsert[] = [];
      const unreadable: string[] = [];
      for (const line of readFileSync(fullPath, 'utf8').split('\n')) {
        if (line.trim().length === 0) continue;
        try {
          rows.push(JSON.parse(line) as RequestLogInsert);
        } catch {
          unreadable.push(line);
        }
      }
      // A line cut short (a file from before spills were written whole, a damaged disk) must not keep the server
      // from starting: it is set aside next to the others for a person to look at.
      if (unreadable.length > 0) {
        this.setAside(unreadable, `unreadable lines of the request-log spill ${file} were set aside in a file`);
      }
      for (let start = 0; start < rows.length; start += this.options.batchSize) {
        const chunk = rows.slice(start, start + this.options.batchSize);
        const written = await requestIdsPresent(
          this.options.database.db,
          chunk.map((row) => row.request_id),
        );
        const missing = chunk.filter((row) => !written.has(row.request_id));
        if (missing.length > 0) await this.writeBatch(missing);
      }
      unlinkSync(fullPath);
      recovered += rows.length;
    }
    if (recovered > 0)
      this.options.logger.info({ rows: recovered }, 'recovered request-log rows spilled at the last shutdown');
    return recovered;
  }

  /** Flushes until empty or the deadline; spills the rest to disk. Idempotent. */
  async close(deadline: number): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    while (this.queued > 0 && Date.now() < deadline) {
      this.nextAttemptAt = 0;
      await this.flush();
      // Rows left after a write that failed wait for the retry delay; rows that arrived during the write go at once.
      if (this.queued > 0 && this.retryDelayMs > 0)
        await new Promise((resolve) => setTimeout(resolve, Math.min(this.retryDelayMs, 1000)));
    }
    if (this.queued > 0) this.spill();
    this.releaseWaiters();
    for (const waiter of this.capacityWaiters.splice(0)) waiter();
  }

  private spill(): void {
    ensureDirectory(this.options.spillDir, 'the request-log spill directory');
    const file = path.join(this.options.spillDir, `spill-${Date.now()}-${process.pid}.jsonl`);
    const rows = this.batches.flatMap((batch) => batch.rows());
    // Written under another name and renamed: a file with the final name is always whole, whatever stops the process.
    writeFileSync(`${file}.partial`, `${rows.map((row) => JSON.stringify(row)).join('\n')}\n`, { mode: 0o600 });
    renameSync(`${file}.partial`, file);
    this.options.logger.error(
      { rows: rows.length, file },
      'request-log rows could not be written before shutdown; spilled to disk, written at next start',
    );
    this.batches = [];
    this.queued = 0;
    this.owed = 0;
  }
}
