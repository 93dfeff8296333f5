import type { ServerResponse } from 'node:http';
import { sseHeaders, sseKeepalive } from '../../../upstream/sse.js';

/**
 * An SSE answer as every streaming endpoint writes it: committed to 200 on the first event (or keepalive), each event
 * written whole, backpressure honoured, comments sent while the upstream is silent so proxies and clients do not time
 * out, and the events kept for the log when the account logs bodies. The event format is the endpoint's. A client
 * that takes nothing for `sendTimeoutMs` while the stream waits on it is given up (its connection closed): a peer that
 * vanished without closing would otherwise hold the upstream call, or a local model's slot, until TCP gives up.
 */
export class SseResponse {
  private committed = false;
  private readonly captured: string[] | undefined;
  private readonly keepalive: NodeJS.Timeout;

  constructor(
    private readonly response: ServerResponse,
    private readonly requestId: string,
    keepaliveMs: number,
    captureBody: boolean,
    private readonly sendTimeoutMs: number,
  ) {
    this.captured = captureBody ? [] : undefined;
    // The first comment commits the response to 200: failures after it are reported in-band.
    const keepalive = setTimeout(() => {
      if (response.destroyed) return;
      this.start();
      response.write(sseKeepalive);
      keepalive.refresh();
    }, keepaliveMs);
    this.keepalive = keepalive;
  }

  /** Whether the 200 and the SSE headers have gone out (errors can then only be reported in-band). */
  get started(): boolean {
    return this.committed;
  }

  /** Whether the client is gone (nothing written reaches anyone). */
  get closed(): boolean {
    return this.response.destroyed;
  }

  start(): void {
    if (this.committed) return;
    this.committed = true;
    this.response.writeHead(200, { 'x-request-id': this.requestId, ...sseHeaders });
  }

  /** Writes one whole event (starting the response if needed); resolves when the client can take more. */
  async write(text: string): Promise<void> {
    if (this.response.destroyed) return;
    this.start();
    this.captured?.push(text);
    if (!this.response.write(text)) await drained(this.response, this.sendTimeoutMs);
    this.keepalive.refresh();
  }

  /** Writes the last event and ends the response (no wait for the client to drain: the end flushes it). */
  endWith(text: string): void {
    clearTimeout(this.keepalive);
    if (this.response.destroyed || this.response.writableEnded) return;
    this.start();
    this.captured?.push(text);
    this.response.end(text);
  }

  /** Ends the response and stops the keepalive comments. */
  end(): void {
    clearTimeout(this.keepalive);
    if (!this.response.writableEnded) this.response.end();
  }

  /** Stops the keepalive comments without ending (the pipeline answers an error that came before the first event). */
  stop(): void {
    clearTimeout(this.keepalive);
  }

  /** The events as sent, for accounts that log bodies. */
  body(): string | undefined {
    return this.captured?.join('');
  }
}

/**
 * Resolves when the response can take more data, or when the client is gone; a client that takes nothing for
 * `timeoutMs` is treated as gone (its connection destroyed, which cancels the request).
 */
function drained(response: ServerResponse, timeoutMs: number): Promise<void> {
  return new Promise((resolve) => {
    const giveUp = setTimeout(() => response.destroy(), timeoutMs);
    const done = () => {
      clearTimeout(giveUp);
      response.off('drain', done);
      response.off('close', done);
      resolve();
    };
    response.on('drain', done);
    response.on('close', done);
  });
}
