import type { Kysely } from 'kysely';
import {
  type Conversation,
  deleteResponse,
  type FoundResponse,
  findItems,
  findResponse,
  insertResponses,
  loadConversation,
  type ResponseRecord,
} from '../../../db/repositories/responses.js';
import type { Database } from '../../../db/schema.js';
import type { Logger } from '../../../observability/logger.js';

/**
 * The stored `/v1/responses` state as the data plane uses it. Writes are queued and written in batches (size or
 * interval, and on close), never on a request's path, like the request log. A read that may need something still
 * queued (a client continuing a conversation the moment its answer arrived) writes the queue first, so this node
 * never answers "not found" for a response it has just given; a request without `previous_response_id` or item
 * references reads nothing.
 */

export interface ResponseStoreOptions {
  db: Kysely<Database>;
  logger: Logger;
  batchSize: number;
  flushIntervalMs: number;
  /** Records held at most; past it the oldest unwritten ones are given up (and logged): memory stays bounded. */
  maxQueue: number;
  /** Bytes of records held at most (a record may be megabytes); a quarter of it starts a write. */
  maxQueueBytes?: number;
}

const defaultMaxQueueBytes = 256 * 1024 * 1024;

export class ResponseStore {
  private queue: ResponseRecord[] = [];
  private queuedBytes = 0;
  /** Ids in `queue` and in the batch being written, for reads that must see them. */
  private readonly pending = new Set<string>();
  private writing: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly options: ResponseStoreOptions) {}

  start(): void {
    this.timer = setInterval(() => void this.flush(), this.options.flushIntervalMs);
    this.timer.unref();
  }

  /** Queues a finished response for storage; returns at once. */
  save(record: ResponseRecord): void {
    if (this.closed) return;
    this.queue.push(record);
    this.queuedBytes += record.storedBytes;
    this.pending.add(record.id);
    const maxBytes = this.options.maxQueueBytes ?? defaultMaxQueueBytes;
    while (this.queue.length > 1 && (this.queue.length > this.options.maxQueue || this.queuedBytes > maxBytes)) {
      const lost = this.queue.shift() as ResponseRecord;
      this.queuedBytes -= lost.storedBytes;
      this.pending.delete(lost.id);
      this.options.logger.error({ responseId: lost.id }, 'stored-responses queue full: a response was not stored');
    }
    if (this.queue.length >= this.options.batchSize || this.queuedBytes >= maxBytes / 4) void this.flush();
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
    }
  }

  private async write(batch: ResponseRecord[]): Promise<void> {
    try {
      await insertResponses(this.options.db, batch);
    } catch (error) {
      // A batch fails as a whole; each record is tried alone so one bad record does not lose the others.
      for (const record of batch) {
        try {
          await insertResponses(this.options.db, [record]);
        } catch (recordError) {
          this.options.logger.error({ err: recordError, responseId: record.id }, 'storing a response failed');
        }
      }
      if (batch.length > 1) this.options.logger.warn({ err: error }, 'stored-responses batch retried one by one');
    } finally {
      for (const record of batch) this.pending.delete(record.id);
    }
  }

  private async settled(ids: readonly string[]): Promise<void> {
    if (this.pending.size === 0) return;
    if (ids.some((id) => this.pending.has(id))) await this.flush();
  }

  async conversation(accountId: string, id: string): Promise<Conversation | undefined> {
    // Any queued response may be part of the chain, not only the one named: write them all.
    if (this.pending.size > 0) await this.flush();
    return loadConversation(this.options.db, accountId, id, Date.now());
  }

  async items(accountId: string, ids: readonly string[]): Promise<Map<string, string>> {
    if (this.pending.size > 0) await this.flush();
    return findItems(this.options.db, accountId, ids, Date.now());
  }

  async find(accountId: string, id: string): Promise<FoundResponse | undefined> {
    await this.settled([id]);
    return findResponse(this.options.db, accountId, id, Date.now());
  }

  async delete(accountId: string, id: string): Promise<boolean> {
    await this.settled([id]);
    return deleteResponse(this.options.db, accountId, id, Date.now());
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.flush();
    this.closed = true;
  }
}
