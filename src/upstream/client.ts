import type { Dispatcher } from 'undici';
import { Pool, errors as undiciErrors } from 'undici';

/**
 * The only module that makes outbound HTTP requests. One keep-alive connection pool per upstream origin
 * (undici `Pool` + `request`: measured 5-7x faster than `fetch` for proxying; undici sets TCP_NODELAY on every socket).
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
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string | Buffer;
  signal?: AbortSignal;
  timeouts: UpstreamTimeouts;
  maxConnections: number;
}

export type UpstreamResponse = Dispatcher.ResponseData;

export type UpstreamFailureKind = 'connect_timeout' | 'first_byte_timeout' | 'idle_timeout' | 'unreachable' | 'aborted';

export class UpstreamFailure extends Error {
  constructor(
    readonly kind: UpstreamFailureKind,
    message: string,
    options?: { cause: unknown },
  ) {
    super(message, options);
    this.name = 'UpstreamFailure';
  }

  get isTimeout(): boolean {
    return this.kind.endsWith('_timeout');
  }
}

/** Maps an error thrown by undici (while connecting, waiting or reading) to an UpstreamFailure. */
export function classifyUpstreamError(error: unknown, signal?: AbortSignal): UpstreamFailure {
  if (error instanceof UpstreamFailure) return error;
  if (signal?.aborted) return new UpstreamFailure('aborted', 'request aborted', { cause: error });
  if (error instanceof undiciErrors.ConnectTimeoutError) {
    return new UpstreamFailure('connect_timeout', 'timed out connecting to the upstream', { cause: error });
  }
  if (error instanceof undiciErrors.HeadersTimeoutError) {
    return new UpstreamFailure('first_byte_timeout', 'the upstream did not start responding in time', { cause: error });
  }
  if (error instanceof undiciErrors.BodyTimeoutError) {
    return new UpstreamFailure('idle_timeout', 'the upstream stopped sending data', { cause: error });
  }
  if (error instanceof undiciErrors.RequestAbortedError || (error as Error)?.name === 'AbortError') {
    return new UpstreamFailure('aborted', 'request aborted', { cause: error });
  }
  const code = (error as NodeJS.ErrnoException)?.code ?? (error as Error)?.name ?? 'error';
  return new UpstreamFailure('unreachable', `could not reach the upstream (${code})`, { cause: error });
}

export class UpstreamClient {
  private readonly pools = new Map<string, Pool>();

  private poolFor(request: UpstreamRequest): Pool {
    const key = `${request.origin}|${request.maxConnections}|${request.timeouts.connectMs}`;
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

  /** Sends a request; resolves once headers arrive. Throws UpstreamFailure. */
  async send(request: UpstreamRequest): Promise<UpstreamResponse> {
    try {
      return await this.poolFor(request).request({
        path: request.path,
        method: request.method,
        headers: request.headers,
        body: request.body ?? null,
        signal: request.signal ?? null,
        headersTimeout: request.timeouts.firstByteMs,
        bodyTimeout: request.timeouts.idleMs,
      });
    } catch (error) {
      throw classifyUpstreamError(error, request.signal);
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.pools.values()].map((pool) => pool.close().catch(() => pool.destroy())));
    this.pools.clear();
  }
}
