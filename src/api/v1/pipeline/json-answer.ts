import type { Exchange } from './endpoint.js';

/** A 200 JSON answer written in one piece; returns the body for the log when the account logs bodies. */
export function sendJson(exchange: Exchange, payload: Buffer | string): string | undefined {
  exchange.response.writeHead(200, {
    'x-request-id': exchange.requestId,
    'content-type': 'application/json',
    'content-length': typeof payload === 'string' ? Buffer.byteLength(payload) : payload.length,
  });
  exchange.response.end(payload);
  return exchange.logBodies ? payload.toString() : undefined;
}
