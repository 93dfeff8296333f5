import type { Cancellation } from './cancellation.js';

/**
 * The cancellations of the requests being served, so that shutdown can wait for them and, past its deadline, cut
 * them short.
 *
 * An array with swap-remove, not a Set: V8 links each retired hash table of a Set to its successor, and one retired
 * table in the old generation kept every later request's object graph alive through scavenges
 * (docs/performance.md#in-flight-requests). Here a removed request leaves nothing behind that points anywhere.
 */
export class InFlightRequests {
  private readonly items: Cancellation[] = [];

  get size(): number {
    return this.items.length;
  }

  add(cancellation: Cancellation): void {
    cancellation.inFlightSlot = this.items.length;
    this.items.push(cancellation);
  }

  /** Removes it in constant time (the last one moves into its place); removing twice does nothing. */
  delete(cancellation: Cancellation): void {
    const slot = cancellation.inFlightSlot;
    if (slot < 0 || this.items[slot] !== cancellation) return;
    const last = this.items.pop() as Cancellation;
    if (last !== cancellation) {
      this.items[slot] = last;
      last.inFlightSlot = slot;
    }
    cancellation.inFlightSlot = -1;
  }

  /** The request in flight whose body is still arriving on a connection (a scan: only for a body that broke). */
  readingOn(socket: object): Cancellation | undefined {
    return this.items.find((item) => item.request?.socket === socket && !item.request.complete);
  }

  /** Aborts every request in flight (a copy is walked: an abort may finish a request, which removes it). */
  abortAll(reason: unknown): void {
    for (const cancellation of [...this.items]) cancellation.abort(reason);
  }
}
