import { ApiError, apiError, upstreamRejectedRequest } from '../errors/api-error.js';
import { UpstreamFailure } from '../upstream/failure.js';

/**
 * One policy, shared by every provider, for turning an upstream's HTTP error into what our client sees:
 * - errors about the client's request (400, 409, 413, 422, 429, …) pass through in OpenAI shape;
 * - errors about the gateway's own setup (401/403: our upstream credentials; 402: our account's billing; 404: our
 *   upstream model name) become 502, because telling the client "invalid API key" would send them hunting for a problem that is not theirs;
 * - upstream 5xx become 502, overload (503, Anthropic's 529) becomes 503, upstream 504 stays 504.
 */

export interface UpstreamErrorDetails {
  status: number;
  message: string | undefined;
  type?: string | undefined;
  code?: string | undefined;
  param?: string | undefined;
  retryAfterSeconds?: number | undefined;
}

function retryAfterHeaders(seconds: number | undefined): Record<string, string> {
  if (seconds === undefined || !Number.isFinite(seconds) || seconds < 0) return {};
  return { 'retry-after': String(Math.ceil(seconds)), 'retry-after-ms': String(Math.round(seconds * 1000)) };
}

export function mapUpstreamError(providerName: string, details: UpstreamErrorDetails): ApiError {
  const { status } = details;
  const upstreamMessage = details.message?.slice(0, 2000) ?? `HTTP ${status} with no error message`;
  // A status read from an error body (Gemini's `code`, OpenAI's in-band `code`) may be anything: only an HTTP error
  // status is passed on, anything else is the upstream failing.
  if (!Number.isInteger(status) || status < 400 || status > 599) {
    return apiError(
      'upstream_error',
      `The upstream provider "${providerName}" failed (status ${status}): ${upstreamMessage}`,
    );
  }
  if (status === 401 || status === 403 || status === 407) {
    return apiError(
      'upstream_auth_failed',
      `The upstream provider "${providerName}" rejected the gateway's credentials (HTTP ${status}). This is a gateway configuration problem, not your API key.`,
    );
  }
  if (status === 402) {
    return apiError(
      'upstream_payment_required',
      `The upstream provider "${providerName}" refused the gateway's account for billing reasons (HTTP 402): ${upstreamMessage}`,
    );
  }
  if (status === 404) {
    return apiError('upstream_not_found', `The upstream provider "${providerName}" answered 404: ${upstreamMessage}`);
  }
  if (status === 429) {
    return upstreamRejectedRequest(
      { status: 429, type: details.type ?? 'rate_limit_error', code: details.code ?? 'rate_limit_exceeded' },
      upstreamMessage,
      { param: details.param ?? null, headers: retryAfterHeaders(details.retryAfterSeconds) },
    );
  }
  if (status >= 400 && status < 500) {
    return upstreamRejectedRequest({ status, type: details.type, code: details.code }, upstreamMessage, {
      param: details.param ?? null,
    });
  }
  if (status === 503 || status === 529) {
    return apiError(
      'upstream_overloaded',
      `The upstream provider "${providerName}" is overloaded: ${upstreamMessage}`,
      { headers: retryAfterHeaders(details.retryAfterSeconds) },
    );
  }
  if (status === 504) {
    return apiError('upstream_timeout', `The upstream provider "${providerName}" timed out: ${upstreamMessage}`);
  }
  return apiError(
    'upstream_error',
    `The upstream provider "${providerName}" failed (HTTP ${status}): ${upstreamMessage}`,
  );
}

/** Connection-level failures: timeouts become 504, anything else 502. */
export function mapUpstreamFailure(providerName: string, failure: UpstreamFailure): ApiError {
  if (failure.isTimeout) {
    return apiError('upstream_timeout', `The upstream provider "${providerName}" timed out: ${failure.message}.`, {
      cause: failure,
    });
  }
  if (failure.kind === 'aborted') {
    return apiError('client_closed_request', 'The request was cancelled.', { cause: failure });
  }
  if (failure.kind === 'too_large') {
    return apiError(
      'upstream_response_too_large',
      `The upstream provider "${providerName}" sent ${failure.message}, more than the gateway accepts.`,
      { cause: failure },
    );
  }
  return apiError(
    'upstream_unreachable',
    `The upstream provider "${providerName}" could not be reached: ${failure.message}.`,
    { cause: failure },
  );
}

export function toProviderError(providerName: string, error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof UpstreamFailure) return mapUpstreamFailure(providerName, error);
  return apiError(
    'upstream_error',
    `The upstream provider "${providerName}" failed: ${error instanceof Error ? error.message : String(error)}`,
    { cause: error },
  );
}

/** Reads Retry-After (seconds or HTTP date) and retry-after-ms from upstream headers. */
export function readRetryAfter(headers: Record<string, string | string[] | undefined>): number | undefined {
  const milliseconds = headers['retry-after-ms'];
  if (typeof milliseconds === 'string' && Number.isFinite(Number(milliseconds))) return Number(milliseconds) / 1000;
  const value = headers['retry-after'];
  if (typeof value !== 'string') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return seconds;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, (date - Date.now()) / 1000);
}

/** An upstream's error body as JSON; one that is not JSON becomes an error object quoting its start. */
export function parseErrorBody(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    const trimmed = text.trim();
    return { error: { message: trimmed ? `non-JSON error body: ${trimmed.slice(0, 200)}` : undefined } };
  }
}
