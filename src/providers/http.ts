import { ApiError, apiError } from '../errors/api-error.js';
import type { CancelSignal } from '../server/cancellation.js';
import {
  classifyUpstreamError,
  type UpstreamClient,
  type UpstreamHeaders,
  type UpstreamResponse,
  type UpstreamTimeouts,
} from '../upstream/client.js';
import { type SseEvent, SseParser } from '../upstream/sse.js';
import { toProviderError } from './upstream-error.js';

/**
 * The HTTP plumbing HTTP providers share (OpenAI-compatible, Anthropic, Gemini): send one request through the
 * UpstreamClient, turn error statuses into ApiErrors with the provider's own error parser, read bodies, and walk an
 * event stream. Translation stays in each provider's folder.
 */

export type ErrorParser = (status: number, headers: UpstreamHeaders, text: string) => ApiError;

export interface UpstreamPost {
  origin: string;
  path: string;
  headers: Readonly<Record<string, string>>;
  body: string | Buffer;
  signal: CancelSignal;
  timeouts: UpstreamTimeouts;
  maxConnections: number;
}

/** Bodies of error responses are read up to this size; the rest is not worth holding in memory. */
const maxErrorBodyBytes = 64 * 1024;

async function collect(response: UpstreamResponse, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response.body) {
    size += (chunk as Buffer).length;
    if (size > limit) {
      response.body.destroy();
      break;
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Sends a POST and reads the whole answer (non-streaming calls); resolves with what `read` makes of the body of a 2xx
 * response, otherwise rejects with the provider's error in OpenAI shape. One promise for the whole call.
 */
export function postForBody<Result>(
  upstream: UpstreamClient,
  providerName: string,
  request: UpstreamPost,
  parseError: ErrorParser,
  read: (body: Buffer) => Result,
): Promise<Result> {
  return upstream.exchange(
    request,
    (reply) => {
      if (reply.statusCode >= 400 || reply.statusCode < 200) {
        const text = reply.body.subarray(0, maxErrorBodyBytes).toString('utf8');
        throw parseError(reply.statusCode, reply.headers, text);
      }
      return read(reply.body);
    },
    (failure) => toProviderError(providerName, failure),
  );
}

/** Sends a POST; resolves with a 2xx response whose body is a stream, otherwise throws the provider's error. */
export async function postUpstream(
  upstream: UpstreamClient,
  providerName: string,
  request: UpstreamPost,
  parseError: ErrorParser,
): Promise<UpstreamResponse> {
  let response: UpstreamResponse;
  try {
    response = await upstream.send(request);
  } catch (error) {
    throw toProviderError(providerName, error);
  }
  if (response.statusCode >= 400 || response.statusCode < 200) {
    const text = await collect(response, maxErrorBodyBytes).catch(() => '');
    throw parseError(response.statusCode, response.headers, text);
  }
  return response;
}

/** Reads a whole (successful) response body; connection failures while reading become provider errors. */
export async function readBody(
  providerName: string,
  response: UpstreamResponse,
  signal: CancelSignal,
): Promise<string> {
  try {
    // undici's own body reader: much cheaper than async-iterating the stream chunk by chunk.
    return await response.body.text();
  } catch (error) {
    throw toProviderError(providerName, classifyUpstreamError(error, signal));
  }
}

export function malformed(providerName: string, what: string): ApiError {
  return apiError('upstream_malformed_response', `The upstream provider "${providerName}" sent ${what}.`);
}

/** Parses a JSON object body, or throws 502 upstream_malformed_response. */
export function parseJsonObject(providerName: string, text: string, what = 'a response'): Record<string, unknown> {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw malformed(providerName, `${what} that is not JSON`);
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw malformed(providerName, `${what} that is not a JSON object`);
  }
  return body as Record<string, unknown>;
}

export function isEventStream(response: UpstreamResponse): boolean {
  const type = response.headers['content-type'];
  return typeof type === 'string' && type.includes('text/event-stream');
}

/**
 * The events of an SSE response body, through the one SSE parser. Connection failures while reading become provider
 * errors (ApiErrors thrown by the consumer pass through untouched); the body is always released.
 */
export async function* sseEvents(
  providerName: string,
  response: UpstreamResponse,
  signal: CancelSignal,
): AsyncGenerator<SseEvent> {
  const parser = new SseParser();
  try {
    for await (const bytes of response.body) {
      for (const event of parser.push(bytes as Buffer)) yield event;
    }
    for (const event of parser.end()) yield event;
  } catch (error) {
    if (error instanceof ApiError) throw error;
    throw toProviderError(providerName, classifyUpstreamError(error, signal));
  } finally {
    if (!response.body.destroyed) response.body.destroy();
  }
}
