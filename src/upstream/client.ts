import type { Dispatcher } from 'undici';
import type { CancelSignal } from '../server/cancellation.js';
import { ConnectionShares } from './connection-shares.js';
import { classifyUpstreamError, UpstreamFailure } from './failure.js';
import { StreamingHandler, type UpstreamHeaders, type UpstreamResponse } from './streamed-response.js';
import { Pool, parseHeaders, undiciErrorClasses as undiciErrors } from './undici-parts.js';

export type { UpstreamHeaders, UpstreamResponse } from './streamed-response.js';

/**
 * The only module that makes outbound HTTP requests. One keep-alive connection pool per provider (undici
 * `Pool`, much cheaper than `fetch` for proxying; TCP_NODELAY on every socket). Two ways to call:
 * - `exchange`: a whole response in one Buffer (non-streaming completions), through undici's `dispatch` with a
 *   handler that only collects bytes: no stream object, no promise per chunk (docs/performance.md#upstream-client);
 * - `stream`: headers first, then the body read as it arrives (event streams), through `dispatch` too, with a handler
 *   that hands the bytes to the SSE parser as the consumer asks for events (upstream/streamed-response.ts).
 * Failures are classified here once, so callers can map them to 502/504 without knowing undici's error zoo.
 */

export interface UpstreamTimeouts {
  connectMs: number;
  /** Until response headers arrive. */
  firstByteMs: number;
  /** Longest silence between body chunks. */
  idleMs: number;
}

export interface UpstreamRequest {
  origin: string;
  path: string;
  /** POST when absent. */
  method?: 'GET' | 'POST';
  headers: Readonly<Record<string, string>>;
  body?: string | Buffer;
  signal?: CancelSignal;
  timeouts: UpstreamTimeouts;
  /**
   * Whose connections the call uses: its provider's name. Each provider has a pool and shares of its own, with its own
   * `maxConnections` and `maxConnectionsPerAccount`, even beside another provider of the same origin.
   */
  pool: string;
  maxConnections: number;
  /** The most of `maxConnections` one account may hold at once (upstream/connection-shares.ts); all by default. */
  maxConnectionsPerAccount?: number;
  /** Whose call this is: connections are shared out by account. */
  account?: string;
}

/** A whole response, read by `exchange`. */
export interface UpstreamReply {
  statusCode: number;
  headers: UpstreamHeaders;
  body: Buffer;
}

/**
 * A response body larger than this is refused rather than held in memory (a misbehaving upstream must not exhaust
 * the gateway); the largest real completions are a few megabytes.
 */
export const maxResponseBytes = 64 * 1024 * 1024;

export class UpstreamClient {
  private readonly pools = new Map<string, Pool>();
  private readonly shares = new Map<string, { provider: string; shares: ConnectionShares }>();
  private readonly maxResponseBytes: number;
  private readonly extraHeaders: Readonly<Record<string, string>> | undefined;

  /** `extraHeaders`: test-only, on every request (startup/test-hooks.ts). */
  constructor(options: { maxResponseBytes?: number; extraHeaders?: Readonly<Record<string, string>> } = {}) {
    this.maxResponseBytes = options.maxResponseBytes ?? maxResponseBytes;
    this.extraHeaders = options.extraHeaders;
  }

  /** One per pool: its connections are what is shared out (keyed like the pool). */
  private sharesFor(request: UpstreamRequest): ConnectionShares {
    const key = poolKey(request);
    let entry = this.shares.get(key);
    if (!entry) {
      const perAccount = request.maxConnectionsPerAccount ?? request.maxConnections;
      entry = { provider: request.pool, shares: new ConnectionShares(request.maxConnections, perAccount) };
      this.shares.set(key, entry);
    }
    return entry.shares;
  }

  /** Per provider that made calls: connections in use and calls waiting for one (its pools summed), for /metrics. */
  connectionLoad(): Array<{ provider: string; inUse: number; waiting: number }> {
    const byProvider = new Map<string, { provider: string; inUse: number; waiting: number }>();
    for (const { provider, shares } of this.shares.values()) {
      const load = shares.load;
      const total = byProvider.get(provider);
      if (total) {
        total.inUse += load.inUse;
        total.waiting += load.waiting;
      } else byProvider.set(provider, { provider, ...load });
    }
    return [...byProvider.values()];
  }

  private poolFor(request: UpstreamRequest): Pool {
    const key = poolKey(request);
    let pool = this.pools.get(key);
    if (!pool) {
      pool = new Pool(request.origin, {
        connections: request.maxConnections,
        pipelining: 1,
        keepAliveTimeout: 30_000,
        keepAliveMaxTimeout: 600_000,
        connect: { timeout: request.timeouts.connectMs },
      });
      this.pools.set(key, pool);
    }
    return pool;
  }

  /**
   * Sends a request and reads the whole response, whatever its status; resolves with what `read` makes of it (one
   * promise for the whole exchange). A connection failure rejects with `fail(failure)` (the failure itself by
   * default); whatever `read` throws rejects as it is.
   */
  exchange<Result>(
    request: UpstreamRequest,
    read: (reply: UpstreamReply) => Result,
    fail: (failure: UpstreamFailure) => unknown = (failure) => failure,
  ): Promise<Result> {
    const options = dispatchOptions(request, this.extraHeaders);
    const pool = this.poolFor(request);
    const shares = this.sharesFor(request);
    const account = request.account ?? '';
    return new Promise((resolve, reject) => {
      const handler = new CollectingHandler(
        request.signal,
        this.maxResponseBytes,
        (reply) => {
          shares.release(account);
          try {
            resolve(read(reply));
          } catch (error) {
            reject(error);
          }
        },
        (failure) => {
          shares.release(account);
          reject(fail(failure));
        },
      );
      if (shares.tryTake(account)) pool.dispatch(options, handler);
      else waitForConnection(shares, account, request.signal, () => pool.dispatch(options, handler), reject, fail);
    });
  }

  /**
   * Sends a request; resolves once headers arrive, whatever the status, with the body to be read as it arrives. A
   * failure, before the headers or while the body is read, comes out as `fail(failure)` (the failure itself by
   * default).
   */
  stream(request: UpstreamRequest, fail: (failure: UpstreamFailure) => unknown = itself): Promise<UpstreamResponse> {
    // Built outside the promise's executor: the handler keeps `fail`, and a closure made in the same scope as one
    // that captures the body would keep the body alive with it for the whole stream.
    const options = dispatchOptions(request, this.extraHeaders);
    const pool = this.poolFor(request);
    const shares = this.sharesFor(request);
    const account = request.account ?? '';
    const connectionFreed = releaserOf(shares, account);
    return new Promise((resolve, reject) => {
      const handler = new StreamingHandler(
        request.signal,
        this.maxResponseBytes,
        fail,
        resolve,
        reject,
        connectionFreed,
      );
      if (shares.tryTake(account)) pool.dispatch(options, handler);
      else waitForConnection(shares, account, request.signal, () => pool.dispatch(options, handler), reject, fail);
    });
  }

  async close(): Promise<void> {
    await Promise.all([...this.pools.values()].map((pool) => pool.close().catch(() => pool.destroy())));
    this.pools.clear();
    this.shares.clear();
  }
}

const itself = (failure: UpstreamFailure): unknown => failure;

/**
 * A pool per provider (its settings are the provider's) and connect timeout (undici sets it per pool). Not per origin:
 * two providers of one origin sharing a pool would share one `maxConnections`, and the first one's share per account.
 */
function poolKey(request: UpstreamRequest): string {
  return `${request.pool}|${request.origin}|${request.timeouts.connectMs}`;
}

/** Made apart from `stream`'s scope: the stream's handler keeps it for the stream's life, and must not keep the body. */
function releaserOf(shares: ConnectionShares, account: string): () => void {
  return () => shares.release(account);
}

/**
 * Dispatches once the account may have a connection (ConnectionShares); a client that leaves first is failed as a
 * cancelled upstream call, as undici would have failed it.
 */
function waitForConnection(
  shares: ConnectionShares,
  account: string,
  signal: CancelSignal | undefined,
  dispatch: () => void,
  reject: (error: unknown) => void,
  fail: (failure: UpstreamFailure) => unknown,
): void {
  const onAbort = () => {
    leave();
    reject(fail(classifyUpstreamError(new undiciErrors.RequestAbortedError(), signal)));
  };
  const leave = shares.wait(account, () => {
    signal?.removeEventListener('abort', onAbort);
    dispatch();
  });
  if (!signal) return;
  if (signal.aborted) onAbort();
  else signal.addEventListener('abort', onAbort, { once: true });
}

function dispatchOptions(
  request: UpstreamRequest,
  extraHeaders: Readonly<Record<string, string>> | undefined,
): Dispatcher.DispatchOptions {
  const { headers, body } = bodyForUndici(request);
  return {
    origin: request.origin,
    path: request.path,
    method: request.method ?? 'POST',
    headers: extraHeaders ? { ...headers, ...extraHeaders } : headers,
    body,
    headersTimeout: request.timeouts.firstByteMs,
    bodyTimeout: request.timeouts.idleMs,
  };
}

/**
 * Bodies from this size on are handed to undici as an iterable that gives up its bytes once they are written: undici
 * keeps a Buffer or string body until the response has been read to the end, for a stream its whole life. Smaller
 * bodies stay a Buffer or string (written with the headers in one call, no promise per request).
 */
export const bodyForgottenFromBytes = 16 * 1024;

function bodyForUndici(request: UpstreamRequest): {
  headers: Readonly<Record<string, string>>;
  // undici's types list no iterable body, though its requests take one (core/request.js: "an iterable, or an async
  // iterable"); declared as the Buffer it stands for.
  body: string | Buffer | null;
} {
  const body = request.body;
  if (body === undefined) return { headers: request.headers, body: null };
  // A string takes at most 3 bytes per UTF-16 unit in UTF-8: one that short stays as it is, without counting bytes.
  if (typeof body === 'string' && body.length * 3 < bodyForgottenFromBytes) return { headers: request.headers, body };
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  if (bytes.length < bodyForgottenFromBytes) return { headers: request.headers, body: bytes };
  // An iterable has no length of its own: undici then takes the declared one (and checks it).
  return {
    headers: { ...request.headers, 'content-length': String(bytes.length) },
    body: new WrittenOnce(bytes) as unknown as Buffer,
  };
}

/** Yields its bytes once and lets go of them (see bodyForgottenFromBytes). */
class WrittenOnce implements Iterable<Buffer> {
  constructor(private bytes: Buffer | undefined) {}

  *[Symbol.iterator](): Iterator<Buffer> {
    const bytes = this.bytes;
    this.bytes = undefined;
    if (bytes !== undefined) yield bytes;
  }
}

/**
 * undici's handler interface (onConnect, onHeaders, onData, onComplete, onError: the one its HTTP/1.1 client calls
 * directly; the newer controller-style handlers are adapted to it per request). Collects the body, follows the
 * request's cancellation, and settles exactly once.
 *
 * Once settled it lets go of everything it held, so that undici's request object, which still points at the handler
 * for a while, keeps nothing big alive into the old generation (docs/performance.md#upstream-client).
 */
class CollectingHandler implements Dispatcher.DispatchHandler {
  private chunks: Buffer[] = [];
  private size = 0;
  private statusCode = 0;
  private rawHeaders: Buffer[] = noHeaders;
  private abortUpstream: ((error: Error) => void) | undefined;
  private signal: CancelSignal | undefined;
  private resolve: ((reply: UpstreamReply) => void) | undefined;
  private reject: ((error: UpstreamFailure) => void) | undefined;
  private readonly onCancel = () => this.abortUpstream?.(new undiciErrors.RequestAbortedError());

  constructor(
    signal: CancelSignal | undefined,
    private readonly maxBytes: number,
    resolve: (reply: UpstreamReply) => void,
    reject: (error: UpstreamFailure) => void,
  ) {
    this.signal = signal;
    this.resolve = resolve;
    this.reject = reject;
  }

  onConnect(abort: (error?: Error) => void): void {
    this.abortUpstream = abort;
    if (!this.signal) return;
    if (this.signal.aborted) abort(new undiciErrors.RequestAbortedError());
    else this.signal.addEventListener('abort', this.onCancel, { once: true });
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[]): boolean {
    this.statusCode = statusCode;
    this.rawHeaders = rawHeaders;
    return true;
  }

  onData(chunk: Buffer): boolean {
    this.size += chunk.length;
    if (this.size > this.maxBytes) {
      // undici hands this error back to onError as it is, so the failure names the limit that was crossed.
      this.abortUpstream?.(new UpstreamFailure('too_large', `a response larger than ${this.maxBytes} bytes`));
      return false;
    }
    this.chunks.push(chunk);
    return true;
  }

  onComplete(): void {
    const resolve = this.resolve;
    if (!resolve) return;
    const chunks = this.chunks;
    const rawHeaders = this.rawHeaders;
    const body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, this.size);
    const statusCode = this.statusCode;
    this.release();
    resolve(new CollectedReply(statusCode, rawHeaders, body));
  }

  onError(error: Error): void {
    const reject = this.reject;
    if (!reject) return;
    const failure = classifyUpstreamError(error, this.signal);
    this.release();
    reject(failure);
  }

  /** Settled: forget the request's data and callbacks (see above), and stop listening for its cancellation. */
  private release(): void {
    this.signal?.removeEventListener('abort', this.onCancel);
    this.signal = undefined;
    this.resolve = undefined;
    this.reject = undefined;
    this.chunks = [];
    this.rawHeaders = noHeaders;
    this.abortUpstream = undefined;
  }
}

const noHeaders: Buffer[] = [];

/**
 * A whole response. Its headers are parsed on first use (errors and their retry-after): most successful responses
 * never need them.
 *
 * A class, not an object literal with a getter: such a literal's map (old generation) holds the getter's closure and
 * kept every response's raw headers alive into the old generation (docs/performance.md#upstream-client).
 */
class CollectedReply implements UpstreamReply {
  private parsedHeaders: UpstreamHeaders | undefined;

  constructor(
    readonly statusCode: number,
    private readonly rawHeaders: Buffer[],
    readonly body: Buffer,
  ) {}

  get headers(): UpstreamHeaders {
    this.parsedHeaders ??= parseHeaders(this.rawHeaders) as UpstreamHeaders;
    return this.parsedHeaders;
  }
}
