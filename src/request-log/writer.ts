import { mkdirSync, readdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { DatabaseHandle } from '../db/connect.js';
import {
  createRequestLogBatchWriter,
  type RequestLogBatchWriter,
  type RequestLogInsert,
} from '../db/repositories/request-log.js';
import type { SqliteWorker } from '../db/sqlite-worker.js';
import type { Logger } from '../observability/logger.js';

/**
 * Where request-log rows are written. Requests enqueue and never wait for the database: a batch is written when it
 * reaches batchSize or every flushInterval, in one transaction that also records each key's last use. A failed
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
  /** Where SQLite batches are written off the event loop (see db/sqlite-worker.ts). */
  sqliteWorker?: SqliteWorker | undefined;
  onWritten?: (rows: number) => void;
  onFlushFailure?: () => void;
}

const maxRetryDelayMs = 5_000;

export class RequestLogWriter {
  private queue: RequestLogInsert[] = [];
  private flushing: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private capacityWaiters: Array<() => void> = [];
  private retryDelayMs = 0;
  private nextAttemptAt = 0;
  /**
   * Rows at the head of the queue that a flush asked for: written even when they do not make a full batch. Only what
   * was queued when the flush was asked for: rows arriving while it writes wait for a full batch or the next flush.
   * (Draining until the queue was empty never ended under steady load: each write of the few rows that had arrived
   * during the previous one let a few more arrive. Seen as 1.9 WAL frames written per row at one request at a time,
   * against 0.23 for batches of 500.)
   */
  private owed = 0;
  private closed = false;
  private readonly writeRows: RequestLogBatchWriter;

  constructor(private readonly options: RequestLogWriterOptions) {
    this.writeRows = createRequestLogBatchWriter(options.database, options.sqliteWorker);
  }

  get depth(): number {
    return this.queue.length;
  }

  start(): void {
    this.timer = setInterval(() => void this.flush(), this.options.flushIntervalMs);
    this.timer.unref();
  }

  enqueue(row: RequestLogInsert): void {
    this.queue.push(row);
    if (this.queue.length >= this.options.batchSize && !this.flushing) {
      // Under load only full batches are written: a batch costs a commit (~0.3 ms with the log's indexes whatever
      // its size), so writing the few rows that arrived during the previous write, again and again, made each row
      // cost four times as much. What is left goes at the next interval (or at flush()).
      void this.startDrain();
    }
  }

  /** undefined when there is room (the common case, no promise allocated); otherwise resolves when there is. */
  waitForCapacity(): Promise<void> | undefined {
    if (this.queue.length < this.options.maxQueue) return undefined;
    void this.flush();
    return new Promise((resolve) => this.capacityWaiters.push(resolve));
  }

  /**
   * Writes everything queued now, full batch or not (single flight: a write under way takes these rows on too). Rows
   * that arrive meanwhile are not waited for.
   */
  flush(): Promise<void> {
    this.owed = this.queue.length;
    // A drain that has just decided to stop has not settled yet: start another once it has.
    if (this.flushing) return this.flushing.then(() => (this.owed > 0 ? this.startDrain() : undefined));
    return this.startDrain();
  }

  private startDrain(): Promise<void> {
    if (this.flushing) return this.flushing;
    if (this.queue.length === 0 || Date.now() < this.nextAttemptAt) return Promise.resolve();
    this.flushing = this.drain().finally(() => {
      this.flushing = undefined;
    });
    return this.flushing;
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0 && (this.owed > 0 || this.queue.length >= this.options.batchSize)) {
      const batch = this.queue.slice(0, this.options.batchSize);
      try {
        await this.writeBatch(batch);
      } catch (error) {
        // One row the database refuses (bad data) must not hold every row behind it forever: when rows written one
        // at a time succeed, the database is fine and the rows that still fail are set aside in a file.
        if (batch.length > 1 && (await this.isolateRejectedRows(batch, error))) continue;
        this.retryDelayMs = Math.min(maxRetryDelayMs, Math.max(100, this.retryDelayMs * 2));
        this.nextAttemptAt = Date.now() + this.retryDelayMs;
        this.options.onFlushFailure?.();
        this.options.logger.warn(
          { err: error, queued: this.queue.length, retryInMs: this.retryDelayMs },
          'request-log write failed; rows kept and retried',
        );
        return;
      }
      this.queue.splice(0, batch.length);
      this.owed = Math.max(0, this.owed - batch.length);
      this.retryDelayMs = 0;
      this.nextAttemptAt = 0;
      this.options.onWritten?.(batch.length);
      this.releaseWaiters();
    }
  }

  /** Writes the batch row by row; true when that settled it (some rows written, the refused ones set aside). */
  private async isolateRejectedRows(batch: readonly RequestLogInsert[], batchError: unknown): Promise<boolean> {
    const rejected: RequestLogInsert[] = [];
    const beforeAnySuccess: RequestLogInsert[] = [];
    let written = 0;
    // A row counts as refused only when it failed after another row was written: the database was answering.
    for (const row of batch) {
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
    this.queue.splice(0, batch.length);
    this.owed = Math.max(0, this.owed - batch.length);
    this.options.onWritten?.(written);
    if (rejected.length > 0) {
      mkdirSync(this.options.spillDir, { recursive: true, mode: 0o700 });
      const file = path.join(this.options.spillDir, `rejected-${Date.now()}-${process.pid}.jsonl.rejected`);
      writeFileSync(file, `${rejected.map((row) => JSON.stringify(row)).join('\n')}\n`, { mode: 0o600 });
      this.options.logger.error(
        { err: batchError, rows: rejected.length, file },
        'the database refused some request-log rows; they were set aside in a file so the others are not held up',
      );
    }
    this.releaseWaiters();
    return true;
  }

  private releaseWaiters(): void {
    while (this.capacityWaiters.length > 0 && this.queue.length < this.options.maxQueue) {
      this.capacityWaiters.shift()?.();
    }
  }

  private async writeBatch(rows: readonly RequestLogInsert[]): Promise<void> {
    const lastUse = new Map<string, number>();
    for (const row of rows) {
      const previous = lastUse.get(row.key_id) ?? 0;
      if (row.created_at > previous) lastUse.set(row.key_id, row.created_at);
    }
    await this.writeRows(rows, lastUse);
  }

  /** Writes rows spilled by an earlier shutdown; files are removed only once their rows are in the database. */
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
      const rows = readFileSync(fullPath, 'utf8')
        .split('\n')
        .filter((line) => line.trim().length > 0)
        .map((line) => JSON.parse(line) as RequestLogInsert);
      for (let start = 0; start < rows.length; start += this.options.batchSize) {
        await this.writeBatch(rows.slice(start, start + this.options.batchSize));
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
    if (this.timer) clearInterval(this.timer);
    while (this.queue.length > 0 && Date.now() < deadline) {
      this.nextAttemptAt = 0;
      await this.flush();
      // Rows left after a write that failed wait for the retry delay; rows that arrived during the write go at once.
      if (this.queue.length > 0 && this.retryDelayMs > 0)
        await new Promise((resolve) => setTimeout(resolve, Math.min(this.retryDelayMs, 1000)));
    }
    if (this.queue.length > 0) this.spill();
    this.releaseWaiters();
    for (const waiter of this.capacityWaiters.splice(0)) waiter();
  }

  private spill(): void {
    mkdirSync(this.options.spillDir, { recursive: true, mode: 0o700 });
    const file = path.join(this.options.spillDir, `spill-${Date.now()}-${process.pid}.jsonl`);
    writeFileSync(file, `${this.queue.map((row) => JSON.stringify(row)).join('\n')}\n`, { mode: 0o600 });
    this.options.logger.error(
      { rows: this.queue.length, file },
      'request-log rows could not be written before shutdown; spilled to disk, written at next start',
    );
    this.queue = [];
  }
}
