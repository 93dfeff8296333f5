import { type ApiError, apiError } from '../errors/api-error.js';
import type { ChatCompletion } from '../openai/types.js';
import type { CancelSignal } from '../server/cancellation.js';
import type { UpstreamClient, UpstreamHeaders, UpstreamResponse, UpstreamTimeouts } from '../upstream/client.js';
import type { StreamItem } from './provider.js';
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
  /** The provider's name: its connections are its own (upstream/client.ts). */
  pool: string;
  maxConnections: number;
  maxConnectionsPerAccount: number;
  account: string | undefined;
}

/** Bodies of error responses are read up to this size; the rest is not worth holding in memory. */
const maxErrorBodyBytes = 64 * 1024;

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
      if (reply.statusCode >= 300 || reply.statusCode < 200) {
        if (reply.statusCode < 400) throw redirected(providerName, reply.statusCode, reply.headers);
        const text = reply.body.subarray(0, maxErrorBodyBytes).toString('utf8');
        throw parseError(reply.statusCode, reply.headers, text);
      }
      return read(reply.body);
    },
    (failure) => toProviderError(providerName, failure),
  );
}

/**
 * Sends a POST; resolves with a 2xx response whose body is read as it arrives, otherwise throws the provider's error.
 * Connection failures, before the headers or while the body is read, are the provider's errors.
 */
export async function postUpstream(
  upstream: UpstreamClient,
  providerName: string,
  request: UpstreamPost,
  parseError: ErrorParser,
): Promise<UpstreamResponse> {
  const response = await upstream.stream(request, (failure) => toProviderError(providerName, failure));
  if (response.statusCode >= 300 && response.statusCode < 400) {
    // Its body is not wanted: reading a byte of it lets the connection go.
    await response.text(1).catch(() => '');
    throw redirected(providerName, response.statusCode, response.headers);
  }
  if (response.statusCode >= 400 || response.statusCode < 200) {
    const text = await response.text(maxErrorBodyBytes).catch(() => '');
    throw parseError(response.statusCode, response.headers, text);
  }
  return response;
}

/**
 * A redirect is not followed (a POST's body would not go with it, and the answer could come from anywhere): a 3xx
 * is a misconfigured `base_url` more often than not, and its body is no answer.
 */
function redirected(providerName: string, status: number, headers: UpstreamHeaders): ApiError {
  // Without its query: an upstream may echo the request's own (a base_url holding a key, as Gemini's ?key= does).
  const location = typeof headers.location === 'string' ? ` to ${headers.location.split('?')[0]?.slice(0, 200)}` : '';
  return apiError(
    'upstream_error',
    `The upstream provider "${providerName}" answered ${status}, a redirect${location}, which the gateway does not follow; check the provider's base_url.`,
  );
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

/** A stream translator: each upstream event becomes zero or more chat chunks; `end` may add the last ones. */
export interface StreamTranslator<Event> {
  push(event: Event): readonly ChatCompletion[];
  end(): readonly ChatCompletion[];
}

/** The chat chunks of an SSE response, each event's JSON given to the provider's translator. */
export async function* translateEvents<Event>(
  providerName: string,
  response: UpstreamResponse,
  translator: StreamTranslator<Event>,
): AsyncGenerator<StreamItem> {
  for await (const event of response.events()) {
    const data = parseJsonObject(providerName, event.data, 'stream data') as Event;
    for (const chunk of translator.push(data)) yield { chunk };
  }
  for (const chunk of translator.end()) yield { chunk };
}
