import type { Kysely } from 'kysely';
import { type ResponseRecord, renewStreamingRows } from '../../../db/repositories/responses.js';
import type { Database } from '../../../db/schema.js';
import type { Logger } from '../../../observability/logger.js';
import type { StreamingResponses } from './streaming-responses.js';

/**
 * The leases of the rows that stand for this node's streams in the database (`in_progress`, response-store.ts): a row
 * says until when its node has said the stream runs, and while streams last this moves it on every quarter of a lease,
 * in one statement for all of them. A row no node renews (its node killed mid-stream) is read as failed once its lease
 * has run out, instead of as in progress until it expires.
 */

/**
 * How long a node's word that a stream still runs holds: responses.stream_lease, or four flush intervals when longer (a
 * row queued may wait a flush interval to be written, and the lease is renewed every quarter of it).
 */
export function streamLeaseMs(leaseMs: number, flushIntervalMs: number): number {
  return Math.max(leaseMs, 4 * flushIntervalMs);
}

export interface StreamLeasesOptions {
  db: Kysely<Database>;
  logger: Logger;
  leaseMs: number;
  streaming: StreamingResponses;
  /** Whether a stream's row is still queued, not written yet: its lease is then moved on in place. */
  queued: (row: ResponseRecord) => boolean;
}

export class StreamLeases {
  private timer: NodeJS.Timeout | undefined;
  private renewing: Promise<void> | undefined;
  private closed = false;

  constructor(private readonly options: StreamLeasesOptions) {}

  /** Until when a row written now is leased. */
  until(): number {
    return Date.now() + this.options.leaseMs;
  }

  /** A stream began: leases are renewed from now on while there are streams. */
  arm(): void {
    if (this.timer || this.closed) return;
    this.timer = setInterval(() => {
      if (this.options.streaming.size === 0) {
        clearInterval(this.timer);
        this.timer = undefined;
        return;
      }
      this.renewing ??= this.renew().finally(() => {
        this.renewing = undefined;
      });
    }, this.options.leaseMs / 4);
    this.timer.unref();
  }

  private async renew(): Promise<void> {
    const until = this.until();
    const written: string[] = [];
    for (const entry of this.options.streaming.all()) {
      if (entry.deleted) continue;
      entry.row.streamingUntil = until;
      if (!this.options.queued(entry.row)) written.push(entry.row.id);
    }
    if (written.length === 0) return;
    try {
      await renewStreamingRows(this.options.db, written, until);
    } catch (error) {
      // Tried again at the next renewal, well within the lease.
      this.options.logger.warn({ err: error, streams: written.length }, 'renewing streaming responses failed');
    }
  }

  /** Renews no more (waiting for a renewal under way). */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    this.timer = undefined;
    await this.renewing;
  }
}
