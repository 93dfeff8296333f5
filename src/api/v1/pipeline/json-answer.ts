import type { Exchange } from './endpoint.js';

/**
 * A 200 JSON answer written in one piece; returns the body for the log when the account logs bodies. Anthropic's
 * surface also names the request in `request-id`, as Anthropic's API does.
 */
export function sendJson(
  exchange: Exchange,
  payload: Buffer | string,
  surface: 'openai' | 'anthropic' = 'openai',
): string | undefined {
  const length = typeof payload === 'string' ? Buffer.byteLength(payload) : payload.length;
  const requestId = exchange.requestId;
  exchange.response.writeHead(
    200,
    surface === 'openai'
      ? { 'x-request-id': requestId, 'content-type': 'application/json', 'content-length': length }
      : {
          'x-request-id': requestId,
          'request-id': requestId,
          'content-type': 'application/json',
          'content-length': length,
        },
  );
  exchange.response.end(payload);
  return exchange.logBodies ? payload.toString() : undefined;
}
