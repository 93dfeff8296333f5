import type { CancelSignal } from '../server/cancellation.js';
import { undiciErrorClasses as undiciErrors } from './undici-parts.js';

/** What can go wrong on the way to an upstream and back, classified once so callers can map it to 502/504. */

export type UpstreamFailureKind =
  | 'connect_timeout'
  | 'first_byte_timeout'
  | 'idle_timeout'
  | 'unreachable'
  | 'aborted'
  | 'too_large';

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
export function classifyUpstreamError(error: unknown, signal?: CancelSignal): UpstreamFailure {
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
