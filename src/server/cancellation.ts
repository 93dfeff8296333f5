/**
 * How a request's work learns that it should stop (the client went away, or the server gave up on it).
 *
 * `CancelSignal` is the part of `AbortSignal` the gateway uses; a real AbortSignal satisfies it, so tests and callers
 * may pass one. On the data plane each request gets a `Cancellation` instead: an AbortController with one
 * listener costs a noticeable share of a whole proxied request (Node's EventTarget; docs/performance.md#cancellation),
 * this next to nothing. undici accepts it as a `signal` (it only needs
 * `aborted`, `reason` and add/removeEventListener), and the local model forwards it to an AbortController of its own.
 */

export interface CancelSignal {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

export class Cancellation implements CancelSignal {
  aborted = false;
  reason: unknown = undefined;
  /** Where InFlightRequests holds it (-1: not held); kept here so removal needs no lookup. */
  inFlightSlot = -1;
  /** The request it cancels, on the data plane: a body that breaks on its connection is its to answer. */
  request: { readonly socket: object | null; readonly complete: boolean } | undefined = undefined;
  /** Most requests never have more than the upstream call listening; allocated on first use. */
  private listeners: Array<() => void> | undefined;

  /** Stops the work: every listener runs once, in the order added; later calls do nothing. */
  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const listeners = this.listeners;
    this.listeners = undefined;
    if (!listeners) return;
    for (const listener of listeners) {
      try {
        listener();
      } catch {
        // One listener failing must not keep the others (the upstream call among them) from being stopped.
      }
    }
  }

  /** Listeners are always called once (as with `{ once: true }`), so options are accepted and not needed. */
  addEventListener(_type: 'abort', listener: () => void): void {
    if (this.aborted) return;
    if (this.listeners) this.listeners.push(listener);
    else this.listeners = [listener];
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const listeners = this.listeners;
    if (!listeners) return;
    const index = listeners.indexOf(listener);
    if (index !== -1) listeners.splice(index, 1);
  }
}
