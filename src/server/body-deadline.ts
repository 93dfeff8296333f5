import type { IncomingMessage, ServerResponse } from 'node:http';
import { apiError } from '../errors/api-error.js';
import { renderOpenAiError } from '../errors/render-openai.js';

/**
 * Request bodies must arrive whole within a deadline, so a client trickling one byte at a time cannot hold a
 * connection (and its buffers) for minutes without even being authenticated. Node's own requestTimeout enforces the
 * longest deadline of the server on every request without a timer per request (see build-app.ts); a route group with a
 * shorter deadline (by default /api's) gets a timer of its own here, started only while a body is still arriving.
 */

const hasBody = (request: IncomingMessage) =>
  request.headers['transfer-encoding'] !== undefined ||
  (request.headers['content-length'] !== undefined && request.headers['content-length'] !== '0');

export const bodyTimeoutError = () =>
  apiError('request_timeout', 'The request was not received in time (its body arrived too slowly).');

export function enforceBodyDeadline(request: IncomingMessage, timeoutMs: number, onExpired: () => void): void {
  if (request.complete || !hasBody(request)) return;
  const timer = setTimeout(() => {
    if (!request.complete) onExpired();
  }, timeoutMs);
  timer.unref();
  const clear = () => clearTimeout(timer);
  request.once('end', clear);
  request.once('close', clear);
}

/** The answer to a body that missed its deadline, where no endpoint answers it (the management API's routes). */
export function answerBodyTimeout(request: IncomingMessage, response: ServerResponse, requestId: string): void {
  if (response.headersSent || response.destroyed) {
    request.socket.destroy();
    return;
  }
  const rendered = renderOpenAiError(bodyTimeoutError(), requestId);
  // The rest of the body is not worth reading: the connection ends with the answer.
  response.writeHead(rendered.status, {
    ...rendered.headers,
    'content-length': String(Buffer.byteLength(rendered.body)),
    'x-content-type-options': 'nosniff',
    connection: 'close',
  });
  response.end(rendered.body, () => request.socket.destroy());
}
