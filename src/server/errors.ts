/**
 * The one error hierarchy of the service, and the one place it becomes the OpenAI error body
 * `{"error":{"message","type","param","code"}}`. Handlers throw; they never shape error responses themselves.
 */

export type ErrorType =
  | 'invalid_request_error'
  | 'permission_error'
  | 'not_found_error'
  | 'rate_limit_error'
  | 'insufficient_quota'
  | 'server_error';

export interface ApiErrorFields {
  status: number;
  message: string;
  type: ErrorType | string;
  code?: string | null;
  param?: string | null;
  /** Extra response headers, e.g. retry-after for 429 and 503. */
  headers?: Record<string, string>;
  cause?: unknown;
}

export class ApiError extends Error {
  readonly status: number;
  readonly type: string;
  readonly code: string | null;
  readonly param: string | null;
  readonly headers: Record<string, string>;

  constructor(fields: ApiErrorFields) {
    super(fields.message, fields.cause === undefined ? undefined : { cause: fields.cause });
    this.name = 'ApiError';
    this.status = fields.status;
    this.type = fields.type;
    this.code = fields.code ?? null;
    this.param = fields.param ?? null;
    this.headers = fields.headers ?? {};
  }

  toBody(): { error: { message: string; type: string; param: string | null; code: string | null } } {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

export function invalidRequest(message: string, param: string | null = null, code: string | null = null): ApiError {
  return new ApiError({ status: 400, type: 'invalid_request_error', message, param, code });
}

export function unauthorized(message: string, code: string | null = null): ApiError {
  return new ApiError({ status: 401, type: 'invalid_request_error', message, code });
}

export function forbidden(message: string, code: string | null = null): ApiError {
  return new ApiError({ status: 403, type: 'permission_error', message, code });
}

/** The same error for "does not exist" and "not allowed to you", so model names do not leak across accounts. */
export function modelNotFound(model: string): ApiError {
  return new ApiError({
    status: 404,
    type: 'invalid_request_error',
    code: 'model_not_found',
    param: 'model',
    message: `The model \`${model}\` does not exist or you do not have access to it.`,
  });
}

export function routeNotFound(method: string, url: string): ApiError {
  return new ApiError({
    status: 404,
    type: 'invalid_request_error',
    code: 'unknown_url',
    message: `Invalid URL (${method} ${url}).`,
  });
}

export function methodNotAllowed(method: string, url: string, allowed: string): ApiError {
  return new ApiError({
    status: 405,
    type: 'invalid_request_error',
    code: 'method_not_allowed',
    message: `Method ${method} is not allowed for ${url}; use ${allowed}.`,
    headers: { allow: allowed },
  });
}

export function payloadTooLarge(limitBytes: number): ApiError {
  return new ApiError({
    status: 413,
    type: 'invalid_request_error',
    code: 'request_too_large',
    message: `Request body is larger than the limit of ${limitBytes} bytes (limits.max_body_size).`,
  });
}

export function upstreamUnavailable(message: string, code = 'upstream_unavailable', status = 502): ApiError {
  return new ApiError({ status, type: 'server_error', code, message });
}

export function upstreamTimeout(message: string): ApiError {
  return new ApiError({ status: 504, type: 'server_error', code: 'upstream_timeout', message });
}

export function serviceUnavailable(message: string, retryAfterSeconds?: number): ApiError {
  const headers: Record<string, string> = {};
  if (retryAfterSeconds !== undefined) {
    headers['retry-after'] = String(retryAfterSeconds);
    headers['retry-after-ms'] = String(retryAfterSeconds * 1000);
  }
  return new ApiError({ status: 503, type: 'server_error', code: 'service_unavailable', message, headers });
}

const internalMessage = 'The server had an error while processing your request. Sorry about that!';

/** Turns anything thrown into an ApiError; errors we did not raise on purpose become an opaque 500. */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  return new ApiError({ status: 500, type: 'server_error', message: internalMessage, cause: error });
}

export interface RenderedError {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * The single rendering of an error into a response: status, JSON content type, extra headers, OpenAI body; with a
 * request id, its x-request-id header first (the data plane writes it with the others, see data-plane.ts).
 */
export function renderError(error: unknown, requestId?: string): RenderedError {
  const apiError = toApiError(error);
  return {
    status: apiError.status,
    headers:
      requestId === undefined
        ? { 'content-type': 'application/json', ...apiError.headers }
        : { 'x-request-id': requestId, 'content-type': 'application/json', ...apiError.headers },
    body: JSON.stringify(apiError.toBody()),
  };
}

/** An error sent inside an already-started SSE stream, followed by `data: [DONE]` (wire contract §3.3). */
export function renderStreamError(error: unknown): string {
  return `data: ${JSON.stringify(toApiError(error).toBody())}\n\n`;
}

export function notFound(message: string, code = 'not_found'): ApiError {
  return new ApiError({ status: 404, type: 'not_found_error', message, code });
}

export function conflict(message: string, code = 'conflict'): ApiError {
  return new ApiError({ status: 409, type: 'invalid_request_error', message, code });
}
