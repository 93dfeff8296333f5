import type SqliteDatabase from 'better-sqlite3';
import type { Kysely } from 'kysely';
import {
  type Conversation,
  deleteResponse,
  findItems,
  findResponse,
  loadConversation,
  type ResponseRecord,
} from '../../../db/repositories/responses.js';
import { insertResponsesPostgres } from '../../../db/repositories/responses-postgres-writer.js';
import { createSqliteResponseWriter } from '../../../db/repositories/responses-sqlite-writer.js';
import type { Database } from '../../../db/schema.js';
import type { Logger } from '../../../observability/logger.js';
import type { SqliteWorker } from '../../../request-log/sqlite-worker.js';
import { idCreatedAt, responseCreatedAt } from './ids.js';
import { storedResponseObject } from './stored-response.js';
import { StreamingResponses } from './streaming-responses.js';
import type { ResponseObject } from './types.js';
import { type UnstoredResponse, UnstoredResponses } from './unstored-responses.js';

/**
 * The stored `/v1/responses` state as the data plane uses it. Writes are queued and written in batches (size or
 * interval, and on close), never on a request's path, like the request log. A read that may need something still
 * queued (a client continuing a conversation the moment its answer arrived) writes the queue first, so this node
 * never answers "not found" for a response it has just given; a request without `previous_response_id` or item
 * references reads nothing. A stream's response is known here from its first event until it is queued (the client
 * has its id from then on): retrieving it meanwhile gives it as far as it got (`in_progress`), deleting it keeps it
 * from being stored, and continuing it waits for its end.
 *
 * Another node may still hold a response it has just given in its own queue: a response id not found whose time (the
 * first digits of the gateway's ids) is younger than a flush interval and a margin is looked for again until that has
 * passed, so a conversation continues on any node; an older id is answered at once. So an id is dated when it is
 * queued (a JSON answer's is named when it is complete); a stream's, named when it began, is written before its last
 * event when it has outlasted half the margin (writeBeforeAnswering).
 */

export interface ResponseStoreOptions {
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
  /** Bytes of stored responses a conversation may hold (loadConversation); a longer one is read as `tooLarge`. */
  maxConversationBytes?: number;
}

const defaultMaxQueueBytes = 256 * 1024 * 1024;
/** Beyond a flush interval: another node's batch write, and clocks a little apart. */
const otherNodeMarginMs = 1000;
const retryEveryMs = 100;

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

export class ResponseStore {
  private queue: ResponseRecord[] = [];
  private queuedBytes = 0;
  /** Ids in `queue` and in the batch being written, for reads that must see them. */
  private readonly pending = new Set<string>();
  private readonly streaming = new StreamingResponses();
  private readonly unstored = new UnstoredResponses();
  private writing: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private started = false;
  private flushScheduled = false;
  private readonly insert: (records: readonly ResponseRecord[]) => Promise<void>;

  constructor(private readonly options: ResponseStoreOptions) {
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

  /** A stream of a response to be stored has shown the client its id; `end` once it is given up (save ends it too). */
  begin(accountId: string, id: string, snapshot: () => ResponseObject): void {
    this.streaming.begin(accountId, id, snapshot);
  }

  end(id: string): void {
    this.streaming.end(id);
  }

  /** Queues a finished response for storage; returns at once. */
  save(record: ResponseRecord): void {
    // Queued, a stream's response is found (and deleted) where any other is: its stream may still be sending its end.
    const streamed = this.streaming.end(record.id);
    if (this.closed || streamed?.deleted === true) return;
    this.queue.push(record);
    this.queuedBytes += record.storedBytes;
    this.pending.add(record.id);
    this.trim();
    const maxBytes = this.options.maxQueueBytes ?? defaultMaxQueueBytes;
    if (this.queue.length >= this.options.batchSize || this.queuedBytes >= maxBytes / 4) this.flushSoon();
    else this.armTimer();
  }

  /**
   * A finished response that grew too large to store: not queued, but remembered so that a continuation of it is told
   * so. One deleted while it streamed is forgotten as if it had been stored.
   */
  refuse(id: string, unstored: UnstoredResponse): void {
    const streamed = this.streaming.end(id);
    if (this.closed || streamed?.deleted === true) return;
    this.unstored.add(id, unstored);
  }

  /** The account's response this node answered but did not store (too large); undefined for any other. */
  unstoredResponse(accountId: string, id: string): UnstoredResponse | undefined {
    return this.unstored.of(accountId, id);
  }

  /** Past max_queue (or its bytes) the oldest unwritten records are given up, and logged: memory stays bounded. */
  private trim(): void {
    const maxBytes = this.options.maxQueueBytes ?? defaultMaxQueueBytes;
    while (this.queue.length > 1 && (this.queue.length > this.options.maxQueue || this.queuedBytes > maxBytes)) {
      const lost = this.queue.shift() as ResponseRecord;
      this.queuedBytes -= lost.storedBytes;
      this.pending.delete(lost.id);
      this.options.logger.error({ responseId: lost.id }, 'stored-responses queue full: a response was not stored');
    }
  }

  /**
   * Writes a queued response before it is answered, waiting at most a margin, when another node would not wait for
   * the next batch: a stream's id, dated when it began, may already be too old for that, and a native upstream's id
   * (not the gateway's) tells no time at all. A client may continue it on another node the moment it has it.
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
    const batch = this.queue;
    this.queue = [];
    this.queuedBytes = 0;
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
      const keptIds = new Set(kept.map((record) => record.id));
      for (const record of batch) if (!keptIds.has(record.id)) this.pending.delete(record.id);
      if (kept.length > 0) {
        // Ahead of what came meanwhile (their order is the conversations' order), within the queue's bounds.
        this.queue = [...kept, ...this.queue];
        for (const record of kept) this.queuedBytes += record.storedBytes;
        this.trim();
      }
    }
  }

  private async settled(ids: readonly string[]): Promise<void> {
    if (this.pending.size === 0) return;
    if (ids.some((id) => this.pending.has(id))) await this.flush();
  }

  get maxConversationBytes(): number {
    return this.options.maxConversationBytes ?? Number.MAX_SAFE_INTEGER;
  }

  async conversation(accountId: string, id: string): Promise<Conversation | undefined> {
    // A response still streaming here (its id is in its first event) is waited for until it is queued.
    await this.streaming.of(accountId, id)?.ended;
    // Any queued response may be part of the chain, not only the one named: write them all.
    if (this.pending.size > 0) await this.flush();
    const maxBytes = this.options.maxConversationBytes;
    return this.lookRecent(id, () => loadConversation(this.options.db, accountId, id, Date.now(), maxBytes));
  }

  /**
   * Until when an id not found may still be in another node's queue: a flush interval and a margin after the gateway
   * named it. Undefined for an id too old for that, one from the future (not the gateway's) or not shaped like the
   * gateway's.
   */
  private waitUntil(createdAt: number | undefined): number | undefined {
    if (createdAt === undefined || this.closed || createdAt > Date.now() + otherNodeMarginMs) return undefined;
    const until = createdAt + this.options.flushIntervalMs + otherNodeMarginMs;
    return until > Date.now() ? until : undefined;
  }

  /** Runs a lookup again, until it finds what it looks for or `until` has passed. */
  private async retryUntil<Found>(
    until: number | undefined,
    lookup: () => Promise<Found>,
    isFound: (found: Found) => boolean,
  ): Promise<Found> {
    let found = await lookup();
    while (until !== undefined && !isFound(found) && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, Math.min(retryEveryMs, until - Date.now())));
      found = await lookup();
    }
    return found;
  }

  /** Runs a lookup of a response id, again while the id is young enough to be in another node's queue. */
  private lookRecent<Found>(id: string, lookup: () => Promise<Found | undefined>): Promise<Found | undefined> {
    return this.retryUntil(this.waitUntil(responseCreatedAt(id)), lookup, (found) => found !== undefined);
  }

  /**
   * Items by id (item references). One of the output of a response still streaming here is waited for until that
   * response is queued, as a continuation of it is; those not found while young enough to be in another node's queue
   * are looked for again.
   */
  async items(accountId: string, ids: readonly string[]): Promise<Map<string, unknown>> {
    if (this.pending.size > 0) await this.flush();
    const lookup = () => findItems(this.options.db, accountId, ids, Date.now());
    let first = await lookup();
    let missing = ids.filter((id) => !first.has(id));
    if (missing.length === 0) return first;
    const streams = this.streaming.holding(accountId, missing);
    if (streams.length > 0) {
      await Promise.all(streams.map((stream) => stream.ended));
      if (this.pending.size > 0) await this.flush();
      first = await lookup();
      missing = ids.filter((id) => !first.has(id));
    }
    let until: number | undefined;
    for (const id of missing) {
      const idUntil = this.waitUntil(idCreatedAt(id));
      if (idUntil !== undefined && (until === undefined || idUntil > until)) until = idUntil;
    }
    if (until === undefined) return first;
    return this.retryUntil(until, lookup, (found) => missing.every((id) => found.has(id)));
  }

  async find(accountId: string, id: string): Promise<ResponseObject | undefined> {
    const streaming = this.streaming.of(accountId, id);
    if (streaming) return streaming.deleted ? undefined : streaming.snapshot();
    await this.settled([id]);
    const found = await this.lookRecent(id, () => findResponse(this.options.db, accountId, id, Date.now()));
    return found && storedResponseObject(found);
  }

  async delete(accountId: string, id: string): Promise<boolean> {
    const streaming = this.streaming.of(accountId, id);
    if (streaming) {
      if (streaming.deleted) return false;
      streaming.deleted = true;
      return true;
    }
    await this.settled([id]);
    const deleted = await this.lookRecent(id, async () =>
      (await deleteResponse(this.options.db, accountId, id, Date.now())) ? true : undefined,
    );
    return deleted === true;
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
