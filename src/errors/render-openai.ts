import { type ApiError, toApiError } from './api-error.js';

/** How an error goes out on the OpenAI surfaces (every /v1 endpoint but /v1/messages, and /api). */

export interface RenderedError {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** OpenAI's error body: `{"error":{"message","type","param","code"}}`. */
export function openAiErrorBody(error: ApiError): {
  error: { message: string; type: string; param: string | null; code: string | null };
} {
  return { error: { message: error.message, type: error.type, param: error.param, code: error.code } };
}

/** Status, JSON content type, the error's own headers and the OpenAI body; with a request id, its header first. */
export function renderOpenAiError(thrown: unknown, requestId?: string): RenderedError {
  const error = toApiError(thrown);
  return {
    status: error.status,
    headers:
      requestId === undefined
        ? { 'content-type': 'application/json', ...error.headers }
        : { 'x-request-id': requestId, 'content-type': 'application/json', ...error.headers },
    body: JSON.stringify(openAiErrorBody(error)),
  };
}

/** An error inside an SSE stream that has started: a `data:` event, after which the stream ends with `[DONE]`. */
export function openAiStreamError(thrown: unknown): string {
  return `data: ${JSON.stringify(openAiErrorBody(toApiError(thrown)))}\n\n`;
}
