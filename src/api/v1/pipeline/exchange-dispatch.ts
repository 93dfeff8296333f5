import type { DispatchOperation } from '../../../routing/operation.js';
import type { Exchange } from './endpoint.js';
import { SseResponse } from './sse-response.js';

/** Runs an operation for this exchange's request: its model's route chain, its cancellation, trace and account. */
export function runOperation<Result>(exchange: Exchange, operation: DispatchOperation<Result>): Promise<Result> {
  return exchange.services.dispatcher.run(operation, exchange.signal, exchange.trace, exchange.principal.accountId);
}

/** Reports a failure after a stream has started to the serving deployment's health (dispatch no longer sees it). */
export function streamFailureReporter(exchange: Exchange): (error: unknown) => void {
  return exchange.services.dispatcher.streamFailureReporter(exchange.trace, exchange.principal.accountId);
}

/**
 * The SSE answer of this exchange: keepalive and send timeout as configured, the body kept for the log when the
 * account logs bodies.
 */
export function openSse(exchange: Exchange): SseResponse {
  const { streamKeepaliveMs, sendTimeoutMs } = exchange.services.config.server;
  return new SseResponse(exchange.response, exchange.requestId, streamKeepaliveMs, exchange.logBodies, sendTimeoutMs);
}
