import type { ApiError } from '../../errors/api-error.js';
import { mapUpstreamError, parseErrorBody, readRetryAfter } from '../upstream-error.js';

/**
 * Google's error body `{"error":{"code","message","status","details":[…]}}` (sometimes wrapped in an array), in HTTP
 * responses and inside streams. Two Gemini habits are corrected here: an invalid API key is answered with 400
 * (ErrorInfo reason API_KEY_INVALID), which is the gateway's credential problem, not the client's request; and the
 * wait before retrying a 429 is given as RetryInfo.retryDelay ("34.4s") rather than a header.
 */

type Headers = Record<string, string | string[] | undefined>;

interface GoogleError {
  code?: unknown;
  message?: unknown;
  status?: unknown;
  details?: unknown;
}

function readError(body: unknown): GoogleError {
  const value = Array.isArray(body) ? body[0] : body;
  const error = (value as { error?: unknown } | null)?.error;
  return error && typeof error === 'object' ? (error as GoogleError) : {};
}

/** `details` when it is the list Google sends; anything else in its place says nothing. */
function detailsOf(error: GoogleError): Array<{ reason?: unknown; retryDelay?: unknown } | null> {
  return Array.isArray(error.details) ? error.details : [];
}

function retryDelaySeconds(error: GoogleError): number | undefined {
  for (const detail of detailsOf(error)) {
    if (typeof detail?.retryDelay === 'string') {
      const seconds = Number.parseFloat(detail.retryDelay);
      if (Number.isFinite(seconds)) return seconds;
    }
  }
  return undefined;
}

function isInvalidKey(error: GoogleError): boolean {
  return detailsOf(error).some((detail) => detail?.reason === 'API_KEY_INVALID');
}

function errorFromGemini(providerName: string, status: number, error: GoogleError, headers: Headers): ApiError {
  const message = typeof error.message === 'string' ? error.message : undefined;
  const effectiveStatus = isInvalidKey(error) ? 401 : status;
  const contextExceeded = message !== undefined && /exceeds the maximum number of tokens/i.test(message);
  return mapUpstreamError(providerName, {
    status: effectiveStatus,
    message,
    type: effectiveStatus < 500 && effectiveStatus !== 429 ? 'invalid_request_error' : undefined,
    code: contextExceeded ? 'context_length_exceeded' : undefined,
    retryAfterSeconds: readRetryAfter(headers) ?? retryDelaySeconds(error),
  });
}

export function parseGeminiError(providerName: string, status: number, headers: Headers, text: string): ApiError {
  const body = parseErrorBody(text);
  return errorFromGemini(providerName, status, readError(body), headers);
}

/** An `{"error":…}` object sent inside a stream or a 200 body; its `code` is the HTTP status it stands for. */
export function geminiErrorInBody(providerName: string, body: unknown): ApiError {
  const error = readError(body);
  const status = typeof error.code === 'number' && error.code >= 400 ? error.code : 500;
  return errorFromGemini(providerName, status, error, {});
}
