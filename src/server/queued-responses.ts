import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Cancellation } from './cancellation.js';

/**
 * Requests pipelined on one connection (HTTP/1.1) are all served at once, but each response gets the connection only
 * when the ones before it are done. Until then Node emits nothing on that response when the client goes away (no
 * 'close', ever): without this, such a request would keep its upstream call (or local generation) running to the end
 * and be logged as a success nobody received. Here the connection's own 'close' cancels the requests still waiting for
 * it: one listener per connection, only for connections with a response in that queue.
 */
export class QueuedResponses {
  private readonly waiting = new WeakMap<Socket, Set<Cancellation>>();

  /** Cancels the request if its connection closes before its response was written whole. */
  watch(request: IncomingMessage, response: ServerResponse, cancellation: Cancellation): void {
    const socket = request.socket;
    let queued = this.waiting.get(socket);
    if (!queued) {
      const cancellations = new Set<Cancellation>();
      queued = cancellations;
      this.waiting.set(socket, cancellations);
      socket.once('close', () => {
        this.waiting.delete(socket);
        for (const waiting of cancellations) waiting.abort('client_closed');
        cancellations.clear();
      });
    }
    const cancellations = queued;
    cancellations.add(cancellation);
    // Written whole, or closed with the connection once it had it (its own 'close' then cancels it).
    const settled = () => cancellations.delete(cancellation);
    response.once('finish', settled);
    response.once('close', settled);
  }
}
