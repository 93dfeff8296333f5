import type { Dispatcher } from 'undici';
import type { CancelSignal } from '../server/cancellation.js';
import { classifyUpstreamError, UpstreamFailure } from './failure.js';
import { type SseEvent, SseParser } from './sse.js';
import { parseHeaders, undiciErrorClasses as undiciErrors } from './undici-parts.js';

export type UpstreamHeaders = Record<string, string | string[] | undefined>;

/**
 * A response read as it arrives: status and headers first, then the body either as SSE events or as one text.
 * Failures (connection, timeouts, cancellation) come out as the error the caller's `fail` made of them.
 */
export interface UpstreamResponse {
  readonly statusCode: number;
  readonly headers: UpstreamHeaders;
  /** Body bytes received and not yet taken by the consumer (bounded by `streamHighWaterMark` while reading events). */
  readonly bufferedBytes: number;
  /**
   * The body's SSE events, parsed as the consumer asks for them. The upstream is paused while the bytes not yet
   * parsed reach `streamHighWaterMark` (a slow client slows the upstream, not the gateway's memory); returning the
   * iterator early closes the connection.
   */
  events(): AsyncIterableIterator<SseEvent>;
  /**
   * The whole body as text. With `limit`, only its first `limit` bytes (the rest is not read: the connection is
   * closed); without, the body must stay under the client's response limit (`too_large` otherwise).
   */
  text(limit?: number): Promise<string>;
}

/** The body bytes held for a consumer before the upstream is paused: undici's own body stream holds as many. */
export const streamHighWaterMark = 64 * 1024;

const ended: IteratorReturnResult<undefined> = Object.freeze({ value: undefined, done: true });

/**
 * undici's handler interface (the one its HTTP/1.1 client calls directly, as the whole-response handler in
 * client.ts), the response and the event iterator in one object: no Readable, no async generator and no promise per
 * chunk between the socket and the SSE parser; one promise per event only when the consumer has to wait for it
 * (docs/performance.md#upstream-client).
 */
export class StreamingHandler implements Dispatcher.DispatchHandler, UpstreamResponse, AsyncIterableIterator<SseEvent> {
  statusCode = 0;
  headers: UpstreamHeaders = noHeaders;
  private signal: CancelSignal | undefined;
  private abortUpstream: ((error: Error) => void) | undefined;
  private resumeUpstream: (() => void) | undefined;
  private paused = false;
  /** Body bytes received and not yet handed to the parser (or to `text`), oldest first from `chunkIndex`. */
  private chunks: Buffer[] = [];
  private chunkIndex = 0;
  private queuedBytes = 0;
  /** The body has been read to its end; `failed`: the response failed, with `failure` (as `fail` made it). */
  private complete = false;
  private failure: unknown;
  private failed = false;
  /** The consumer stopped (returned the iterator, or `text` got its limit): nothing more is wanted. */
  private released = false;
  private parser: SseParser | undefined;
  /** The parser has been told the body ended (its last event, if any, is in `parsed`). */
  private parserEnded = false;
  private parsed: SseEvent[] = noEvents;
  private parsedIndex = 0;
  /** Until headers arrive: the caller's promise of the response. */
  private onResponse: ((response: UpstreamResponse) => void) | undefined;
  private onResponseFailed: ((error: unknown) => void) | undefined;
  /** A consumer waiting for the next event (`events`), or for the whole body (`textWanted`). */
  private waiting: ((result: IteratorResult<SseEvent>) => void) | undefined;
  private waitingFailed: ((error: unknown) => void) | undefined;
  private textWanted:
    | { limit: number | undefined; resolve: (text: string) => void; reject: (error: unknown) => void }
    | undefined;
  private readonly onCancel = () => this.abortUpstream?.(new undiciErrors.RequestAbortedError());

  constructor(
    signal: CancelSignal | undefined,
    private readonly maxBytes: number,
    private readonly fail: (failure: UpstreamFailure) => unknown,
    resolve: (response: UpstreamResponse) => void,
    reject: (error: unknown) => void,
    /** Called once, when undici is done with the connection (the body ended or failed, however). */
    private connectionFreed?: () => void,
  ) {
    this.signal = signal;
    this.onResponse = resolve;
    this.onResponseFailed = reject;
  }

  get bufferedBytes(): number {
    return this.queuedBytes;
  }

  // undici's side.

  onConnect(abort: (error?: Error) => void): void {
    this.abortUpstream = abort;
    if (!this.signal) return;
    if (this.signal.aborted) abort(new undiciErrors.RequestAbortedError());
    else this.signal.addEventListener('abort', this.onCancel, { once: true });
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void): boolean {
    this.statusCode = statusCode;
    // Parsed at once, not when first asked for: the raw ones are views of the socket's first read, which they would
    // keep alive for the whole stream (docs/performance.md, "Memory").
    this.headers = parseHeaders(rawHeaders) as UpstreamHeaders;
    this.resumeUpstream = resume;
    const onResponse = this.onResponse;
    this.onResponse = undefined;
    this.onResponseFailed = undefined;
    onResponse?.(this);
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.released) return false;
    this.chunks.push(chunk);
    this.queuedBytes += chunk.length;
    if (this.textWanted) return this.collectText();
    if (this.waiting) this.answerWaiting();
    // undici stops reading the socket until `resume` (the upstream then feels TCP's backpressure).
    this.paused = this.queuedBytes >= streamHighWaterMark;
    return !this.paused;
  }

  onComplete(): void {
    this.freeConnection();
    this.complete = true;
    this.paused = false;
    this.stopListening();
    if (this.textWanted) this.collectText();
    else if (this.waiting) this.answerWaiting();
  }

  onError(error: Error): void {
    this.freeConnection();
    if (this.released || this.complete) return;
    const failure = this.fail(classifyUpstreamError(error, this.signal));
    this.stopListening();
    const onResponseFailed = this.onResponseFailed;
    if (onResponseFailed) {
      this.onResponse = undefined;
      this.onResponseFailed = undefined;
      this.release();
      onResponseFailed(failure);
      return;
    }
    this.failed = true;
    this.failure = failure;
    this.paused = false;
    const textWanted = this.textWanted;
    if (textWanted) {
      this.release();
      textWanted.reject(failure);
    } else if (this.waiting) {
      this.answerWaiting();
    }
  }

  // The consumer's side.

  events(): this {
    this.parser ??= new SseParser();
    return this;
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<SseEvent>> {
    let result: IteratorResult<SseEvent> | undefined;
    try {
      result = this.take();
    } catch (error) {
      return Promise.reject(error);
    }
    if (result !== undefined) return Promise.resolve(result);
    return new Promise((resolve, reject) => {
      this.waiting = resolve;
      this.waitingFailed = reject;
    });
  }

  /** The consumer stopped early (the client went away, or it has what it needs): close the connection. */
  return(): Promise<IteratorResult<SseEvent>> {
    this.cancel();
    return Promise.resolve(ended);
  }

  text(limit?: number): Promise<string> {
    return new Promise((resolve, reject) => {
      if (this.failed) {
        this.release();
        reject(this.failure);
        return;
      }
      this.textWanted = { limit, resolve, reject };
      this.collectText();
    });
  }

  /**
   * The next event if one can be had now: parsed from bytes already received, or the end. Throws the response's
   * failure once the events before it have been taken; undefined when the consumer must wait for the upstream.
   */
  private take(): IteratorResult<SseEvent> | undefined {
    const parser = this.parser;
    if (parser === undefined || this.released) return ended;
    for (;;) {
      if (this.parsedIndex < this.parsed.length) {
        const value = this.parsed[this.parsedIndex++] as SseEvent;
        if (this.parsedIndex === this.parsed.length) {
          this.parsed = noEvents;
          this.parsedIndex = 0;
        }
        return { value, done: false };
      }
      if (this.chunkIndex < this.chunks.length) {
        const chunk = this.chunks[this.chunkIndex] as Buffer;
        this.chunks[this.chunkIndex++] = emptyChunk;
        this.queuedBytes -= chunk.length;
        if (this.chunkIndex === this.chunks.length) {
          this.chunks = [];
          this.chunkIndex = 0;
        }
        this.parsed = parser.push(chunk);
        continue;
      }
      if (this.complete) {
        if (!this.parserEnded) {
          this.parserEnded = true;
          this.parsed = parser.end();
          continue;
        }
        this.release();
        return ended;
      }
      if (this.failed) {
        const failure = this.failure;
        this.release();
        throw failure;
      }
      // Nothing left to parse: let undici read the socket again (it may hand over more at once, through onData).
      if (this.paused) {
        this.paused = false;
        this.resumeUpstream?.();
        if (this.chunkIndex < this.chunks.length || this.complete || this.failed) continue;
      }
      return undefined;
    }
  }

  /** Called from undici's side while a consumer waits: answers it if the new state has something for it. */
  private answerWaiting(): void {
    const resolve = this.waiting as (result: IteratorResult<SseEvent>) => void;
    const reject = this.waitingFailed as (error: unknown) => void;
    let result: IteratorResult<SseEvent> | undefined;
    try {
      result = this.take();
    } catch (error) {
      this.waiting = undefined;
      this.waitingFailed = undefined;
      reject(error);
      return;
    }
    if (result === undefined) return;
    this.waiting = undefined;
    this.waitingFailed = undefined;
    resolve(result);
  }

  /** `text` mode: takes every received byte (never pausing), and answers at the end or at the limit. */
  private collectText(): boolean {
    const wanted = this.textWanted as NonNullable<StreamingHandler['textWanted']>;
    const limit = wanted.limit;
    const chunks = this.chunkIndex === 0 ? this.chunks : this.chunks.slice(this.chunkIndex);
    const size = this.queuedBytes;
    if (limit === undefined && size > this.maxBytes) {
      const failure = this.fail(new UpstreamFailure('too_large', `a response larger than ${this.maxBytes} bytes`));
      this.cancel();
      wanted.reject(failure);
      return false;
    }
    if (limit !== undefined && size >= limit) {
      const text = Buffer.concat(chunks, size).toString('utf8', 0, limit);
      this.cancel();
      wanted.resolve(text);
      return false;
    }
    if (!this.complete) {
      this.paused = false;
      this.resumeUpstream?.();
      return true;
    }
    const text = Buffer.concat(chunks, size).toString('utf8');
    this.release();
    wanted.resolve(text);
    return true;
  }

  /** Nothing more is wanted: close the connection unless the body was read to its end, and let go of everything. */
  private cancel(): void {
    if (this.released) return;
    const abort = this.complete || this.failed ? undefined : this.abortUpstream;
    this.release();
    abort?.(new undiciErrors.RequestAbortedError());
  }

  private freeConnection(): void {
    const connectionFreed = this.connectionFreed;
    this.connectionFreed = undefined;
    connectionFreed?.();
  }

  private stopListening(): void {
    this.signal?.removeEventListener('abort', this.onCancel);
    this.signal = undefined;
  }

  /** Settled for the consumer: forget the data and the callbacks (undici's request may point here a while longer). */
  private release(): void {
    this.released = true;
    this.stopListening();
    this.chunks = [];
    this.chunkIndex = 0;
    this.queuedBytes = 0;
    this.parser = undefined;
    this.parsed = noEvents;
    this.parsedIndex = 0;
    this.waiting = undefined;
    this.waitingFailed = undefined;
    this.textWanted = undefined;
    this.abortUpstream = undefined;
    this.resumeUpstream = undefined;
    this.failure = undefined;
  }
}

const noHeaders: UpstreamHeaders = Object.freeze({});
const noEvents: SseEvent[] = [];
const emptyChunk = Buffer.alloc(0);
