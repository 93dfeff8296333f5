import { type ApiError, toApiError } from './api-error.js';
import { anthropicTypeOf, errorCodes } from './error-codes.js';
import type { RenderedError } from './render-openai.js';

/** How an error goes out on /v1/messages: Anthropic's shape, from the same table as OpenAI's. */

/** Anthropic answers an overload with 529; every other status is the one the table gives. */
export function anthropicStatusOf(error: ApiError): number {
  return anthropicTypeOf(errorCodes[error.errorCode], error.status) === 'overloaded_error' ? 529 : error.status;
}

/** `{"type":"error","error":{"type","message"}}`. */
export function anthropicErrorBody(error: ApiError): { type: 'error'; error: { type: string; message: string } } {
  return {
    type: 'error',
    error: { type: anthropicTypeOf(errorCodes[error.errorCode], error.status), message: error.message },
  };
}

export function renderAnthropicError(thrown: unknown, requestId?: string): RenderedError {
  const error = toApiError(thrown);
  return {
    status: anthropicStatusOf(error),
    headers:
      requestId === undefined
        ? { 'content-type': 'application/json', ...error.headers }
        : { 'x-request-id': requestId, 'request-id': requestId, 'content-type': 'application/json', ...error.headers },
    body: JSON.stringify(anthropicErrorBody(error)),
  };
}

/** An error inside a Messages stream that has started: `event: error` with the same body. */
export function anthropicStreamError(thrown: unknown): string {
  return `event: error\ndata: ${JSON.stringify(anthropicErrorBody(toApiError(thrown)))}\n\n`;
}
