import { type ApiError, toApiError } from '../../../server/errors.js';
import { sseEvent } from '../../../upstream/sse.js';

/**
 * The gateway's errors in Anthropic's shape, for the `/v1/messages` surface: `{"type":"error","error":{"type",
 * "message"},"request_id"}` with the status Anthropic gives that type (anthropic-sdk-typescript resources/shared.ts,
 * the API's errors page). One table keyed by the gateway's status, with rows for particular codes before it, so it
 * can become a column of a shared error-code table. What stays the gateway's own: the message (it already says what
 * happened), extra headers (`retry-after`, `x-should-retry: false` for an exhausted budget, which the Anthropic SDKs
 * honour) and `code`/`param`, which this shape has no place for (the log keeps them).
 */

export type AnthropicErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'billing_error'
  | 'permission_error'
  | 'not_found_error'
  | 'request_too_large'
  | 'rate_limit_error'
  | 'timeout_error'
  | 'api_error'
  | 'overloaded_error';

export interface AnthropicErrorShape {
  status: number;
  type: AnthropicErrorType;
}

/** By the gateway's status. Gateway faults Anthropic has no status for become its own: 502 -> 500, 503 -> 529. */
export const anthropicErrorByStatus: Readonly<Record<number, AnthropicErrorShape>> = {
  400: { status: 400, type: 'invalid_request_error' },
  401: { status: 401, type: 'authentication_error' },
  402: { status: 402, type: 'billing_error' },
  403: { status: 403, type: 'permission_error' },
  404: { status: 404, type: 'not_found_error' },
  405: { status: 405, type: 'invalid_request_error' },
  408: { status: 408, type: 'timeout_error' },
  409: { status: 409, type: 'invalid_request_error' },
  413: { status: 413, type: 'request_too_large' },
  422: { status: 422, type: 'invalid_request_error' },
  429: { status: 429, type: 'rate_limit_error' },
  431: { status: 431, type: 'request_too_large' },
  // The client closed the request: the status is the log's, no client is left to read the body.
  499: { status: 499, type: 'invalid_request_error' },
  500: { status: 500, type: 'api_error' },
  502: { status: 500, type: 'api_error' },
  503: { status: 529, type: 'overloaded_error' },
  504: { status: 504, type: 'timeout_error' },
  529: { status: 529, type: 'overloaded_error' },
};

/** By the gateway's error code, where the code says more than the status. */
const anthropicErrorByCode: Readonly<Record<string, AnthropicErrorShape>> = {
  context_length_exceeded: { status: 400, type: 'invalid_request_error' },
  request_too_large: { status: 413, type: 'request_too_large' },
};

export function anthropicErrorShape(error: Pick<ApiError, 'status' | 'code'>): AnthropicErrorShape {
  const byCode = error.code === null ? undefined : anthropicErrorByCode[error.code];
  if (byCode) return byCode;
  const byStatus = anthropicErrorByStatus[error.status];
  if (byStatus) return byStatus;
  return error.status >= 500
    ? { status: 500, type: 'api_error' }
    : { status: error.status, type: 'invalid_request_error' };
}

const authenticationHint =
  ' Claude Code: set ANTHROPIC_AUTH_TOKEN (sent as Authorization: Bearer), not ANTHROPIC_API_KEY; Anthropic SDKs: pass the key as authToken (auth_token in Python), not apiKey.';

/**
 * The message as this surface words it. A prompt over the model's context window is reported with the words Claude
 * Code looks for ("prompt is too long") to compact the conversation and retry; a missing or misplaced key says how
 * Anthropic clients send a Bearer token.
 */
function messageOf(error: ApiError): string {
  if (error.code === 'context_length_exceeded' && !/prompt is too long/i.test(error.message)) {
    return `prompt is too long: ${error.message}`;
  }
  if (error.status === 401 && error.code !== 'invalid_api_key') return `${error.message}${authenticationHint}`;
  return error.message;
}

export interface AnthropicErrorBody {
  type: 'error';
  error: { type: AnthropicErrorType; message: string };
  request_id?: string;
}

export function anthropicErrorBody(error: ApiError, requestId?: string): AnthropicErrorBody {
  const body: AnthropicErrorBody = {
    type: 'error',
    error: { type: anthropicErrorShape(error).type, message: messageOf(error) },
  };
  if (requestId !== undefined) body.request_id = requestId;
  return body;
}

export interface RenderedAnthropicError {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** The whole response for an error on this surface, as `renderError` (server/errors.ts) is for the OpenAI one. */
export function renderAnthropicError(error: unknown, requestId?: string): RenderedAnthropicError {
  const apiError = toApiError(error);
  return {
    status: anthropicErrorShape(apiError).status,
    headers:
      requestId === undefined
        ? { 'content-type': 'application/json', ...apiError.headers }
        : { 'x-request-id': requestId, 'content-type': 'application/json', ...apiError.headers },
    body: JSON.stringify(anthropicErrorBody(apiError, requestId)),
  };
}

/** A failure after a stream began: Anthropic's `error` event (the stream ends after it). */
export function renderAnthropicStreamError(error: unknown): string {
  return sseEvent('error', JSON.stringify(anthropicErrorBody(toApiError(error))));
}
