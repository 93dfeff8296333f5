import { type ErrorCode, type ErrorCodeEntry, errorCodes } from './error-codes.js';

/**
 * The one error hierarchy of the service. Code throws an ApiError built from its code (status and type come from the
 * table in error-codes.ts); each surface renders it once (render-openai.ts, render-anthropic.ts). Handlers never shape
 * error responses themselves.
 */

export interface ApiErrorOptions {
  /** The request field at fault (OpenAI's `param`). */
  param?: string | null;
  /** Extra response headers, e.g. retry-after for 429 and 503. */
  headers?: Readonly<Record<string, string>>;
  cause?: unknown;
}

/** What an upstream said about a request it refused, passed on as it is (see upstreamRejectedRequest). */
interface WireOverrides {
  status: number;
  type: string;
  code: string | null;
}

export class ApiError extends Error {
  readonly status: number;
  /** OpenAI's `error.type`. */
  readonly type: string;
  /** The `error.code` clients see (usually the table's code; null where OpenAI sends none). */
  readonly code: string | null;
  readonly param: string | null;
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    /** The row of the error-code table this error comes from. */
    readonly errorCode: ErrorCode,
    message: string,
    options: ApiErrorOptions = {},
    overrides?: WireOverrides,
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ApiError';
    const entry = errorCodes[errorCode];
    this.status = overrides?.status ?? entry.status;
    this.type = overrides?.type ?? entry.type;
    this.code = overrides ? overrides.code : wireCodeOf(errorCode);
    this.param = options.param ?? null;
    this.headers = options.headers ?? noHeaders;
  }
}

function wireCodeOf(errorCode: ErrorCode): string | null {
  const entry: ErrorCodeEntry = errorCodes[errorCode];
  return entry.wireCode === undefined ? errorCode : entry.wireCode;
}

const noHeaders: Readonly<Record<string, string>> = Object.freeze({});

/** An error by its code: `apiError('model_not_found', message, { param: 'model' })`. */
export function apiError(code: ErrorCode, message: string, options?: ApiErrorOptions): ApiError {
  return new ApiError(code, message, options);
}

/**
 * An upstream's refusal of the request itself (400, 409, 422, …), passed on with the upstream's own status, type and
 * code so the client sees what the provider said.
 */
export function upstreamRejectedRequest(
  wire: { status: number; type?: string | undefined; code?: string | undefined },
  message: string,
  options?: ApiErrorOptions,
): ApiError {
  return new ApiError('upstream_rejected_request', message, options, {
    status: wire.status,
    type: wire.type ?? 'invalid_request_error',
    code: wire.code ?? null,
  });
}

/** `retry-after` (whole seconds, at least 1) and `retry-after-ms` for a wait, as the OpenAI SDKs read them. */
export function retryHeaders(milliseconds: number): Record<string, string> {
  return {
    'retry-after': String(Math.max(1, Math.ceil(milliseconds / 1000))),
    'retry-after-ms': String(Math.max(1, Math.ceil(milliseconds))),
  };
}

/** The same error for "does not exist" and "not allowed to you", so model names do not leak across accounts. */
export function modelNotFound(model: string): ApiError {
  return apiError('model_not_found', `The model \`${model}\` does not exist or you do not have access to it.`, {
    param: 'model',
  });
}

export function routeNotFound(method: string, url: string): ApiError {
  return apiError('unknown_url', `Invalid URL (${method} ${url}).`);
}

export function methodNotAllowed(method: string, url: string, allowed: string): ApiError {
  return apiError('method_not_allowed', `Method ${method} is not allowed for ${url}; use ${allowed}.`, {
    headers: { allow: allowed },
  });
}

export function payloadTooLarge(limitBytes: number): ApiError {
  return apiError(
    'request_too_large',
    `Request body is larger than the limit of ${limitBytes} bytes (limits.max_body_size).`,
  );
}

/** The client went away (or cancelled) before the answer was complete. */
export function requestCancelled(cause?: unknown): ApiError {
  return apiError('client_closed_request', 'The request was cancelled.', { cause });
}

const internalMessage = 'The server had an error while processing your request. Sorry about that!';

/** Anything thrown, as an ApiError; errors not raised on purpose become an opaque 500 (the cause is kept for logs). */
export function toApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  return apiError('internal_error', internalMessage, { cause: error });
}

/** An ApiError as plain data (to cross a process boundary), and back. */
export interface ApiErrorData {
  errorCode: ErrorCode;
  message: string;
  status: number;
  type: string;
  code: string | null;
  param: string | null;
  headers: Record<string, string>;
}

export function toApiErrorData(error: ApiError): ApiErrorData {
  return {
    errorCode: error.errorCode,
    message: error.message,
    status: error.status,
    type: error.type,
    code: error.code,
    param: error.param,
    headers: { ...error.headers },
  };
}

export function fromApiErrorData(data: ApiErrorData): ApiError {
  return new ApiError(
    data.errorCode,
    data.message,
    { param: data.param, headers: data.headers },
    { status: data.status, type: data.type, code: data.code },
  );
}
