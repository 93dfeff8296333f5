import type { ResponseRecord } from '../../../db/repositories/responses.js';
import type { ResponseObject } from './types.js';

/**
 * The responses to be stored that are still streaming on this node, from the event that gave the client the id until
 * they are queued (response-store.ts): retrieving one meanwhile gives it as far as it got, deleting one keeps it from
 * being stored, and continuing one waits until it is queued.
 */

export interface StreamingResponse {
  accountId: string;
  /** The response as far as it got. */
  snapshot: () => ResponseObject;
  /** Deleted while it streamed: not stored when it ends. */
  deleted: boolean;
  /**
   * The row that stands for it in the database while it streams (`in_progress`), with the ids of the items it has
   * shown so far (its input's, then its output's as they come).
   */
  row: ResponseRecord;
  /** Set once a version of its row has left the write queue: other nodes may know of it from then on. */
  rowWritten?: true;
  /** Settles once it is queued or given up. */
  ended: Promise<void>;
}

interface Entry extends StreamingResponse {
  end: () => void;
}

export class StreamingResponses {
  private readonly entries = new Map<string, Entry>();

  begin(accountId: string, id: string, snapshot: () => ResponseObject, row: ResponseRecord): void {
    let end = () => {};
    const ended = new Promise<void>((resolve) => {
      end = resolve;
    });
    this.entries.set(id, { accountId, snapshot, deleted: false, row, ended, end });
  }

  /** Forgets the response (queued or given up), releasing whoever waits for it; what it was, if it was streaming. */
  end(id: string): StreamingResponse | undefined {
    const entry = this.entries.get(id);
    if (!entry) return undefined;
    this.entries.delete(id);
    entry.end();
    return entry;
  }

  /**
   * The account's responses streaming here (not deleted) that hold one of these item ids (in their input, or their
   * output so far): what an item_reference to such an item must wait for, as a continuation does.
   */
  holding(accountId: string, itemIds: readonly string[]): StreamingResponse[] {
    const wanted = new Set(itemIds);
    const found: StreamingResponse[] = [];
    for (const entry of this.entries.values()) {
      if (entry.accountId !== accountId || entry.deleted) continue;
      if (entry.row.itemIds.some((id) => wanted.has(id))) found.push(entry);
    }
    return found;
  }

  /** Every response streaming here (deleted or not). */
  all(): IterableIterator<StreamingResponse> {
    return this.entries.values();
  }

  get size(): number {
    return this.entries.size;
  }

  /** The account's response streaming here (deleted or not); undefined for another account's, as for none. */
  of(accountId: string, id: string): StreamingResponse | undefined {
    const entry = this.entries.get(id);
    return entry?.accountId === accountId ? entry : undefined;
  }
}
