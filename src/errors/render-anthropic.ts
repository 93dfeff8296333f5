import { type ApiError, toApiError } from './api-error.js';
import { type AnthropicErrorType, anthropicShapeOf } from './error-codes.js';
import type { RenderedError } from './render-openai.js';

/**
 * How an error goes out on /v1/messages: Anthropic's shape, from the same table as OpenAI's. What stays the gateway's
 * own: the message, and extra headers (`retry-after`, `x-should-retry`, which the Anthropic SDKs honour); `code` and
 * `param` have no place in this shape (the log keeps them).
 */

export interface AnthropicErrorBody {
  type: 'error';
  error: { type: AnthropicErrorType; message: string };
  request_id?: string;
}

const authenticationHint =
  ' Claude Code: set ANTHROPIC_AUTH_TOKEN (sent as Authorization: Bearer), not ANTHROPIC_API_KEY; Anthropic SDKs: pass the key as authToken (auth_token in Python), not apiKey.';

/**
 * The message as this surface words it: a prompt over the context window in the words Claude Code looks for
 * ("prompt is too long", to compact and retry); a missing or misplaced key says how Anthropic clients send a Bearer.
 */
function messageOf(error: ApiError): string {
  if (error.code === 'context_length_exceeded' && !/prompt is too long/i.test(error.message)) {
    return `prompt is too long: ${error.message}`;
  }
  if (error.status === 401 && error.code !== 'invalid_api_key') return `${error.message}${authenticationHint}`;
  return error.message;
}

export function anthropicStatusOf(error: ApiError): number {
  return anthropicShapeOf(error.status).status;
}

export function anthropicErrorBody(error: ApiError, requestId?: string): AnthropicErrorBody {
  const body: AnthropicErrorBody = {
    type: 'error',
    error: { type: anthropicShapeOf(error.status).type, message: messageOf(error) },
  };
  if (requestId !== undefined) body.request_id = requestId;
  return body;
}

export function renderAnthropicError(thrown: unknown, requestId?: string): RenderedError {
  const error = toApiError(thrown);
  return {
    status: anthropicStatusOf(error),
    headers:
      requestId === undefined
        ? { 'content-type': 'application/json', ...error.headers }
        : { 'x-request-id': requestId, 'request-id': requestId, 'content-type': 'application/json', ...error.headers },
    body: JSON.stringify(anthropicErrorBody(error, requestId)),
  };
}

/** An error inside a Messages stream that has started: `event: error` with the same body. */
export function anthropicStreamError(thrown: unknown): string {
  return `event: error\ndata: ${JSON.stringify(anthropicErrorBody(toApiError(thrown)))}\n\n`;
}
