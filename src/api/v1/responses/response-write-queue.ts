import type SqliteDatabase from 'better-sqlite3';
import type { Kysely } from 'kysely';
import type { ResponseRecord } from '../../../db/repositories/responses.js';
import { insertResponsesPostgres } from '../../../db/repositories/responses-postgres-writer.js';
import { createSqliteResponseWriter } from '../../../db/repositories/responses-sqlite-writer.js';
import type { Database } from '../../../db/schema.js';
import type { Logger } from '../../../observability/logger.js';
import type { SqliteWorker } from '../../../request-log/sqlite-worker.js';
import { responseCreatedAt } from './ids.js';

/**
 * The write side of the stored responses (response-store.ts): records queued and written in batches (size or interval,
 * and on close), never on a request's path, like the request log. Records the database could not take stay queued and
 * are tried again; the queue is bounded in records and bytes, the oldest given up (and logged) past it.
 *
 * A response streaming is queued twice: as the row that stands for it while it streams (`in_progress`, queued when it
 * begins), then whole when it ends, replacing that row. While the first is still queued the second takes its place, so
 * a stream that ends before the next batch is written once, like any response; one deleted while it streamed then
 * writes nothing at all. A later `in_progress` record of a response (its row with more item ids) likewise takes the place
 * of one still queued.
 */

export interface ResponseWriteQueueOptions {
  db: Kysely<Database>;
  /** SQLite's connection under `db`, when it is SQLite: batches are then written through prepared statements. */
  sqlite?: SqliteDatabase.Database;
  /**
   * SQLite's worker thread: batches are written there when it is alive (no event-loop stall, and no lock contention
   * with the thread's own writes and checkpoints), on `sqlite` otherwise.
   */
  sqliteWorker?: Pick<SqliteWorker, 'alive' | 'writeResponses'>;
  logger: Logger;
  batchSize: number;
  flushIntervalMs: number;
  /** Records held at most; past it the oldest unwritten ones are given up (and logged): memory stays bounded. */
  maxQueue: number;
  /** Bytes of records held at most (a record may be megabytes); a quarter of it starts a write. */
  maxQueueBytes?: number;
}

const defaultMaxQueueBytes = 256 * 1024 * 1024;
/** Beyond a flush interval: another node's batch write, and clocks a little apart. */
export const otherNodeMarginMs = 1000;
/**
 * How long past a flush interval a reader looks again for an id another node may not have written yet: longer than the
 * writer's margin, since an overloaded node's batch write can come seconds late; the cost is a later 404 for a young id
 * that was never stored.
 */
export const otherNodePatienceMs = 3000;

/**
 * Whether the database refused a record (a constraint or a value it cannot hold: retrying cannot help), rather than
 * failing to take it (unreachable, shutting down, busy).
 */
function isRefusal(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return false;
  // SQLite's extended codes name the kind; PostgreSQL's SQLSTATE classes 22 (data) and 23 (integrity constraints).
  return code.startsWith('SQLITE_CONSTRAINT') || code === 'SQLITE_TOOBIG' || /^2[23]/.test(code);
}

/**
 * The batch without the `in_progress` records a later record of the same response replaces (one kept from a failed
 * write, with its response queued since): one statement may not write a row twice.
 */
function supersededDropped(
  batch: readonly ResponseRecord[],
  dropped: (record: ResponseRecord) => void,
): ResponseRecord[] {
  const later = new Set<string>();
  const kept: ResponseRecord[] = [];
  for (let index = batch.length - 1; index >= 0; index--) {
    const record = batch[index] as ResponseRecord;
    if (record.state === 'in_progress' && later.has(record.id)) {
      dropped(record);
      continue;
    }
    later.add(record.id);
    kept.push(record);
  }
  return kept.reverse();
}

export class ResponseWriteQueue {
  private queue: ResponseRecord[] = [];
  private queuedBytes = 0;
  /** Ids in `queue` and in the batch being written (with how many records each), for reads that must see them. */
  private readonly pending = new Map<string, number>();
  /** The `in_progress` records in `queue` by id, which their response replaces there when it comes before a write. */
  private readonly streamingRows = new Map<string, ResponseRecord>();
  private writing: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private started = false;
  private flushScheduled = false;
  private readonly insert: (records: readonly ResponseRecord[]) => Promise<void>;

  constructor(private readonly options: ResponseWriteQueueOptions) {
    const sqlite = options.sqlite;
    if (sqlite) {
      const writeHere = createSqliteResponseWriter(sqlite);
      const worker = options.sqliteWorker;
      this.insert = async (records) => {
        if (worker?.alive) await worker.writeResponses(records);
        else writeHere(records);
      };
    } else {
      this.insert = (records) => insertResponsesPostgres(options.db, records);
    }
  }

  /** Writes begin: a timer is armed only while responses wait, so an idle gateway does not wake up for them. */
  start(): void {
    this.started = true;
    this.armTimer();
  }

  /** One flush interval after the oldest waiting response was queued, as the request log does. */
  private armTimer(): void {
    if (!this.started || this.closed || this.timer || this.queue.length === 0) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, this.options.flushIntervalMs);
    this.timer.unref();
  }

  /** Queues a record; returns at once. */
  push(record: ResponseRecord): void {
    if (this.closed) return;
    if (record.state === 'in_progress') {
      const queued = this.streamingRows.get(record.id);
      if (queued) this.unqueue(queued);
      this.streamingRows.set(record.id, record);
    } else {
      const streaming = this.streamingRows.get(record.id);
      if (streaming && this.unqueue(streaming)) {
        // Nothing was written of a response deleted while it streamed: nothing needs to be.
        if (record.state === 'deleted') return;
      }
    }
    this.queue.push(record);
    this.queuedBytes += record.storedBytes;
    this.pending.set(record.id, (this.pending.get(record.id) ?? 0) + 1);
    this.trim();
    const maxBytes = this.options.maxQueueBytes ?? defaultMaxQueueBytes;
    if (this.queue.length >= this.options.batchSize || this.queuedBytes >= maxBytes / 4) this.flushSoon();
    else this.armTimer();
  }

  /** Takes a queued `in_progress` record out of the queue (its response takes its place); false once it is not there. */
  private unqueue(record: ResponseRecord): boolean {
    this.streamingRows.delete(record.id);
    const index = this.queue.lastIndexOf(record);
    if (index < 0) return false;
    this.queue.splice(index, 1);
    this.queuedBytes -= record.storedBytes;
    this.release(record.id);
    return true;
  }

  private release(id: string): void {
    const count = this.pending.get(id) ?? 0;
    if (count > 1) this.pending.set(id, count - 1);
    else this.pending.delete(id);
  }

  /** Past max_queue (or its bytes) the oldest unwritten records are given up, and logged: memory stays bounded. */
  private trim(): void {
    const maxBytes = this.options.maxQueueBytes ?? defaultMaxQueueBytes;
    while (this.queue.length > 1 && (this.queue.length > this.options.maxQueue || this.queuedBytes > maxBytes)) {
      const lost = this.queue.shift() as ResponseRecord;
      this.queuedBytes -= lost.storedBytes;
      this.release(lost.id);
      if (this.streamingRows.get(lost.id) === lost) this.streamingRows.delete(lost.id);
      this.options.logger.error({ responseId: lost.id }, 'stored-responses queue full: a response was not stored');
    }
  }

  /**
   * Writes a queued response before it is answered, waiting at most a margin, when another node would not wait for
   * the next batch: a stream's id, dated when it began, may already be too old for that, and the id of a native JSON
   * answer (the upstream's, not the gateway's) tells no time at all. A client may continue it on another node the moment
   * it has it.
   * Concurrent callers share one write (a batch, as ever).
   */
  async writeBeforeAnswering(id: string): Promise<void> {
    if (!this.pending.has(id)) return;
    const createdAt = responseCreatedAt(id);
    const now = Date.now();
    const datable = createdAt !== undefined && createdAt <= now + otherNodeMarginMs;
    if (datable && now - createdAt < otherNodeMarginMs / 2) return;
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, otherNodeMarginMs);
    });
    await Promise.race([this.flush(), bound]);
    clearTimeout(timer);
  }

  /** A write after the current callbacks, not inside the request that filled the batch (it would wait for it). */
  private flushSoon(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => {
      this.flushScheduled = false;
      void this.flush();
    });
  }

  /** Writes everything queued (and waits for a write in progress). */
  async flush(): Promise<void> {
    while (this.writing) await this.writing;
    if (this.queue.length === 0) return;
    const batch = supersededDropped(this.queue, (record) => this.release(record.id));
    this.queue = [];
    this.queuedBytes = 0;
    this.streamingRows.clear();
    this.writing = this.write(batch);
    try {
      await this.writing;
    } finally {
      this.writing = undefined;
      this.armTimer();
    }
  }

  private async write(batch: ResponseRecord[]): Promise<void> {
    const kept: ResponseRecord[] = [];
    try {
      await this.insert(batch);
    } catch (error) {
      // A batch fails as a whole; each record is tried alone so one bad record does not lose the others.
      for (const record of batch) {
        // Once the database could not take one, the others are not tried: they wait with it for the next write.
        if (kept.length > 0) {
          kept.push(record);
          continue;
        }
        try {
          await this.insert([record]);
        } catch (recordError) {
          // A record the database refuses is given up; one it could not take (down, locked) waits for the next write.
          if (isRefusal(recordError)) {
            this.options.logger.error({ err: recordError, responseId: record.id }, 'storing a response failed');
          } else {
            kept.push(record);
          }
        }
      }
      if (kept.length > 0) {
        this.options.logger.warn({ err: error, kept: kept.length }, 'stored-responses write failed; kept and retried');
      } else if (batch.length > 1) {
        this.options.logger.warn({ err: error }, 'stored-responses batch retried one by one');
      }
    } finally {
      const keptRecords = new Set(kept);
      for (const record of batch) if (!keptRecords.has(record)) this.release(record.id);
      if (kept.length > 0) {
        // Ahead of what came meanwhile (their order is the conversations' order), within the queue's bounds.
        this.queue = [...kept, ...this.queue];
        for (const record of kept) this.queuedBytes += record.storedBytes;
        this.trim();
      }
    }
  }

  /**
   * Whether this `in_progress` record is still queued, not yet taken into a write: it may then still be changed in place
   * (what the write takes is what it is then).
   */
  queues(record: ResponseRecord): boolean {
    return this.streamingRows.get(record.id) === record;
  }

  /** Whether anything is queued or being written. */
  get idle(): boolean {
    return this.pending.size === 0;
  }

  /** Whether this record is queued or being written. */
  holds(id: string): boolean {
    return this.pending.has(id);
  }

  async close(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.flush();
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
