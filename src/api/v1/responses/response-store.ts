import {
  type Conversation,
  defaultStreamLeaseMs,
  deleteResponse,
  findItems,
  findResponse,
  isMarkedDeleted,
  loadConversation,
  type ResponseRecord,
  StreamingItem,
  storableId,
  type UnstoredMarker,
} from '../../../db/repositories/responses.js';
import { idCreatedAt, responseCreatedAt } from './ids.js';
import {
  otherNodeMarginMs,
  otherNodePatienceMs,
  ResponseWriteQueue,
  type ResponseWriteQueueOptions,
} from './response-write-queue.js';
import { stoppedResponseObject, storedResponseObject, toDeletedRecord, toUnstoredRecord } from './stored-response.js';
import { StreamLeases, streamLeaseMs } from './stream-leases.js';
import { type StreamingResponse, StreamingResponses } from './streaming-responses.js';
import type { ResponseObject } from './types.js';

/**
 * The stored `/v1/responses` state as the data plane uses it. Writes are queued and written in batches (size or
 * interval, and on close: response-write-queue.ts), never on a request's path, like the request log. A read that may need something still
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
 *
 * A response grown too large to store is written as a row that says so (toUnstoredRecord), through the same queue: any
 * node then answers a continuation of it "answered but not stored", not "not found". A stream's response is queued as
 * a row standing for it (`in_progress`) when it begins, which its whole row replaces when it ends (before any write, in
 * the queue itself): when a batch is written meanwhile, other nodes retrieve it as it began, can delete it, and tell a
 * continuation of it that it has not ended, rather than "not found". A response found in progress whose id is young is
 * looked for again like one not found, since its end may be in the other node's queue.
 *
 * That row says until when its node has said the stream runs (`streamingUntil`: a lease, moved on while the stream
 * lasts: stream-leases.ts); a row whose lease has run out is read as failed, its node having stopped without ending it
 * (killed mid-stream). At close, the rows of streams still running here are written with their lease ended, so every
 * node reads them as failed at once. The row also keeps the ids of the items the stream has shown (its input's, its
 * output's as they come: itemShown), so a reference to one of them is told the response has not ended rather than "not
 * found". The node streaming a response reads its row before answering a retrieval or deletion of it once the row may
 * be written, since another node may have deleted it (deletedElsewhere).
 */

/** What a lookup of a response id finds: the response, or that it was answered but not stored. */
export type FoundStoredResponse =
  | { response: ResponseObject; unstored?: undefined }
  | { response?: undefined; unstored: UnstoredMarker };

export interface ResponseStoreOptions extends ResponseWriteQueueOptions {
  /** Bytes of stored responses a conversation may hold (loadConversation); a longer one is read as `tooLarge`. */
  maxConversationBytes?: number;
  /** How long a streaming row's lease runs (streamLeaseMs); a minute by default. */
  streamLeaseMs?: number;
}

const retryEveryMs = 100;

export class ResponseStore {
  private readonly writes: ResponseWriteQueue;
  private readonly streaming = new StreamingResponses();
  private readonly leases: StreamLeases;
  private closed = false;

  constructor(private readonly options: ResponseStoreOptions) {
    this.writes = new ResponseWriteQueue(options);
    this.leases = new StreamLeases({
      db: options.db,
      logger: options.logger,
      leaseMs: options.streamLeaseMs ?? streamLeaseMs(defaultStreamLeaseMs, options.flushIntervalMs),
      streaming: this.streaming,
      queued: (row) => this.writes.queues(row),
    });
  }

  /** Writes begin. */
  start(): void {
    this.writes.start();
  }

  /**
   * A stream of a response to be stored has shown the client its id: `row` (toInProgressRecord) stands for it in the
   * database until it is saved. `end` once it is given up (save ends it too).
   */
  begin(accountId: string, id: string, snapshot: () => ResponseObject, row: ResponseRecord): void {
    row.streamingUntil = this.leases.until();
    this.streaming.begin(accountId, id, snapshot, row);
    if (this.closed) return;
    this.writes.push(row);
    this.leases.arm();
  }

  /**
   * A stream of the account's has shown the client an output item: its row keeps the id (changed where it waits in the
   * queue, or queued again once written), so a reference to the item is told the response has not ended.
   */
  itemShown(accountId: string, id: string, itemId: string): void {
    const entry = this.streaming.of(accountId, id);
    if (!entry || entry.deleted || this.closed || !storableId(itemId) || entry.row.itemIds.includes(itemId)) return;
    if (this.writes.queues(entry.row)) {
      (entry.row.itemIds as string[]).push(itemId);
      return;
    }
    entry.rowWritten = true;
    entry.row = { ...entry.row, itemIds: [...entry.row.itemIds, itemId], streamingUntil: this.leases.until() };
    this.writes.push(entry.row);
  }

  /** Whether a version of a streaming response's row may have been written (another node may then know of it). */
  private rowMayBeWritten(streaming: StreamingResponse): boolean {
    return streaming.rowWritten === true || !this.writes.queues(streaming.row);
  }

  end(id: string): void {
    const given = this.streaming.end(id);
    // Given up without being saved: the row that stood for it must not outlive it.
    if (given && !given.deleted && !this.closed) this.writes.push(toDeletedRecord(given.row));
  }

  /** Queues a finished response for storage; returns at once. */
  save(record: ResponseRecord): void {
    // Queued, a stream's response is found (and deleted) where any other is: its stream may still be sending its end.
    const streamed = this.streaming.end(record.id);
    // One deleted while it streamed has its row marked deleted already.
    if (this.closed || streamed?.deleted === true) return;
    if (streamed && this.rowMayBeWritten(streamed)) keepWrittenIds(record, streamed.row);
    this.writes.push(record);
  }

  /**
   * A finished response (its record) that grew past `limitBytes`: not stored, but a row saying so is queued in its
   * place, so that a continuation of it on any node is told why it cannot be continued. One deleted while it streamed
   * is forgotten as if it had been stored.
   */
  refuse(record: ResponseRecord, limitBytes: number): void {
    this.save(toUnstoredRecord(record, limitBytes));
  }

  /** See ResponseWriteQueue.writeBeforeAnswering. */
  writeBeforeAnswering(id: string): Promise<void> {
    return this.writes.writeBeforeAnswering(id);
  }

  /** Writes everything queued (and waits for a write in progress). */
  flush(): Promise<void> {
    return this.writes.flush();
  }

  private async settled(ids: readonly string[]): Promise<void> {
    if (ids.some((id) => this.writes.holds(id))) await this.flush();
  }

  get maxConversationBytes(): number {
    return this.options.maxConversationBytes ?? Number.MAX_SAFE_INTEGER;
  }

  async conversation(accountId: string, id: string): Promise<Conversation | undefined> {
    // A response still streaming here (its id is in its first event) is waited for until it is queued.
    await this.streaming.of(accountId, id)?.ended;
    // Any queued response may be part of the chain, not only the one named: write them all.
    if (!this.writes.idle) await this.flush();
    const maxBytes = this.options.maxConversationBytes;
    return this.lookRecent(id, () => loadConversation(this.options.db, accountId, id, Date.now(), maxBytes));
  }

  /**
   * Until when an id not found may still be in another node's queue: a flush interval and a few seconds
   * (otherNodePatienceMs) after the gateway named it. Undefined for an id too old for that, one from the future (not the gateway's) or not shaped like the
   * gateway's.
   */
  private waitUntil(createdAt: number | undefined): number | undefined {
    if (createdAt === undefined || this.closed || createdAt > Date.now() + otherNodeMarginMs) return undefined;
    const until = createdAt + this.options.flushIntervalMs + otherNodePatienceMs;
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

  /**
   * Runs a lookup of a response id, again while the id is young enough to be in another node's queue and it is not
   * found, or found still in progress (its end may be in that queue too).
   */
  private lookRecent<Found extends { inProgress?: true }>(
    id: string,
    lookup: () => Promise<Found | undefined>,
  ): Promise<Found | undefined> {
    return this.retryUntil(
      this.waitUntil(responseCreatedAt(id)),
      lookup,
      (found) => found !== undefined && found.inProgress !== true,
    );
  }

  /**
   * Items by id (item references). One of a response still streaming here is waited for until that response is queued,
   * as a continuation of it is; those not found, or found in a response streaming on another node, while young enough
   * to be in another node's queue are looked for again.
   */
  async items(accountId: string, ids: readonly string[]): Promise<Map<string, unknown>> {
    if (!this.writes.idle) await this.flush();
    const lookup = () => findItems(this.options.db, accountId, ids, Date.now());
    const unresolved = (found: ReadonlyMap<string, unknown>) =>
      ids.filter((id) => {
        const item = found.get(id);
        return item === undefined || (item instanceof StreamingItem && !item.stopped);
      });
    let first = await lookup();
    let missing = unresolved(first);
    if (missing.length === 0) return first;
    const streams = this.streaming.holding(accountId, missing);
    if (streams.length > 0) {
      await Promise.all(streams.map((stream) => stream.ended));
      if (!this.writes.idle) await this.flush();
      first = await lookup();
      missing = unresolved(first);
    }
    let until: number | undefined;
    for (const id of missing) {
      // An item of a response streaming elsewhere is dated by its response: its end may be in that node's queue.
      const item = first.get(id);
      const createdAt = item instanceof StreamingItem ? responseCreatedAt(item.responseId) : idCreatedAt(id);
      const idUntil = this.waitUntil(createdAt);
      if (idUntil !== undefined && (until === undefined || idUntil > until)) until = idUntil;
    }
    if (until === undefined) return first;
    return this.retryUntil(until, lookup, (found) => unresolved(found).length === 0);
  }

  /**
   * Whether a response streaming here was deleted on another node (its row there marked deleted): it is then deleted
   * here too, and not stored when it ends. Read only once its row may have been written, by a retrieval or a deletion.
   */
  private async deletedElsewhere(accountId: string, streaming: StreamingResponse): Promise<boolean> {
    if (!this.rowMayBeWritten(streaming)) return false;
    if (!(await isMarkedDeleted(this.options.db, accountId, streaming.row.id))) return false;
    streaming.deleted = true;
    return true;
  }

  async find(accountId: string, id: string): Promise<FoundStoredResponse | undefined> {
    const streaming = this.streaming.of(accountId, id);
    if (streaming) {
      if (streaming.deleted || (await this.deletedElsewhere(accountId, streaming))) return undefined;
      return { response: streaming.snapshot() };
    }
    await this.settled([id]);
    const found = await this.lookRecent(id, () => findResponse(this.options.db, accountId, id, Date.now()));
    if (!found) return undefined;
    if (found.unstored) return { unstored: found.unstored };
    return { response: found.stopped ? stoppedResponseObject(found) : storedResponseObject(found) };
  }

  async delete(accountId: string, id: string): Promise<boolean> {
    const streaming = this.streaming.of(accountId, id);
    if (streaming && !streaming.deleted) await this.deletedElsewhere(accountId, streaming);
    // Still streaming here after that read, it is deleted here (once); ended meanwhile, it is deleted where it is stored.
    if (streaming && this.streaming.of(accountId, id) === streaming) {
      if (streaming.deleted) return false;
      streaming.deleted = true;
      // Another node may have its row (in progress) already: marked deleted, it is retrieved nowhere.
      if (!this.closed) this.writes.push(toDeletedRecord(streaming.row));
      return true;
    }
    await this.settled([id]);
    const deleted = await this.lookRecent(id, async () =>
      (await deleteResponse(this.options.db, accountId, id, Date.now())) ? {} : undefined,
    );
    return deleted !== undefined;
  }

  async close(): Promise<void> {
    await this.leases.close();
    // Streams still running as the node stops will not be stored: their rows say so now, not when their lease runs out.
    const now = Date.now();
    for (const entry of this.streaming.all()) {
      if (entry.deleted) continue;
      entry.row = { ...entry.row, streamingUntil: now };
      this.writes.push(entry.row);
    }
    await this.writes.close();
    this.closed = true;
  }
}

/**
 * A streamed response's record keeps the ids its row was written with (their keys are written already), so they go
 * with it when it is deleted or expires, even one its final output no longer lists.
 */
function keepWrittenIds(record: ResponseRecord, row: ResponseRecord): void {
  const ids = new Set(record.itemIds);
  const extra = row.itemIds.filter((id) => !ids.has(id));
  if (extra.length > 0) record.itemIds = [...record.itemIds, ...extra];
}
