import type { ApiError } from '../../errors/api-error.js';
import { mapUpstreamError, readRetryAfter } from '../upstream-error.js';

/**
 * Anthropic's error body `{"type":"error","error":{"type","message"},"request_id"}` (docs: API errors), in HTTP
 * responses and as the `error` event of a stream. Statuses then follow the gateway's one policy (upstream-error.ts):
 * 529 overloaded_error -> 503, 401/403 -> 502, …
 */

type Headers = Record<string, string | string[] | undefined>;

/** The HTTP status Anthropic gives each error type, for errors that arrive inside a stream (no status of their own). */
function statusOfType(type: string | undefined): number {
  switch (type) {
    case 'invalid_request_error':
      return 400;
    case 'authentication_error':
      return 401;
    case 'billing_error':
      return 402;
    case 'permission_error':
      return 403;
    case 'not_found_error':
      return 404;
    case 'request_too_large':
      return 413;
    case 'rate_limit_error':
      return 429;
    case 'timeout_error':
      return 504;
    case 'overloaded_error':
      return 529;
    default:
      return 500;
  }
}

function codeOf(type: string | undefined, message: string | undefined): string | undefined {
  // "prompt is too long: 208736 tokens > 200000 maximum"
  if (type === 'invalid_request_error' && message && /prompt is too long|context window/i.test(message)) {
    return 'context_length_exceeded';
  }
  if (type === 'request_too_large') return 'request_too_large';
  return undefined;
}

function readError(body: unknown): { type?: string; message?: string } {
  const error = (body as { error?: unknown } | null)?.error;
  if (!error || typeof error !== 'object') return {};
  const fields = error as { type?: unknown; message?: unknown };
  return {
    type: typeof fields.type === 'string' ? fields.type : undefined,
    message: typeof fields.message === 'string' ? fields.message : undefined,
  };
}

function errorFromAnthropic(
  providerName: string,
  status: number,
  body: unknown,
  retryAfter: number | undefined,
): ApiError {
  const { type, message } = readError(body);
  return mapUpstreamError(providerName, {
    status,
    message,
    // Anthropic's type names are OpenAI's for client errors; server-side ones are reported as server_error.
    type: status < 500 && status !== 429 ? 'invalid_request_error' : undefined,
    code: codeOf(type, message),
    retryAfterSeconds: retryAfter,
  });
}

export function parseAnthropicError(providerName: string, status: number, headers: Headers, text: string): ApiError {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    const trimmed = text.trim();
    body = { error: { message: trimmed ? `non-JSON error body: ${trimmed.slice(0, 200)}` : undefined } };
  }
  return errorFromAnthropic(providerName, status, body, readRetryAfter(headers));
}

/** An `error` event in the middle of a stream (e.g. overloaded_error), with the status its type would have had. */
export function anthropicStreamError(providerName: string, data: unknown): ApiError {
  return errorFromAnthropic(providerName, statusOfType(readError(data).type), data, undefined);
}
