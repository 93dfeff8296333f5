import type { ApiError } from '../errors/api-error.js';

/**
 * What the router does after a failed attempt, decided from the error the client would otherwise see:
 * - `retry`: a transient upstream failure (connection refused or reset, 429, 5xx, overload, a malformed or truncated
 *   answer): try another deployment of the model, or the same one again after a backoff;
 * - `next-deployment`: this deployment cannot serve (its credentials or model name are rejected, it timed out): try
 *   the model's other deployments, then the fallbacks, but not this one again;
 * - `next-model`: no deployment of this model can serve this request (its context window is too small, or it cannot
 *   take a parameter): go to the next fallback model;
 * - `busy`: an in-process provider (the local model) is at capacity: its queue is the bound, so the request is not
 *   parked in the gateway to retry it; other deployments and fallbacks may serve it, else the client gets the 503;
 * - `fatal`: the request itself is wrong (other 4xx), or the client has gone: stop and report.
 */

export type FailureKind = 'retry' | 'next-deployment' | 'next-model' | 'busy' | 'fatal';

const retryableCodes = new Set([
  'upstream_error',
  'upstream_overloaded',
  'upstream_unreachable',
  'upstream_malformed_response',
]);
const deploymentCodes = new Set([
  'upstream_auth_failed',
  'upstream_not_found',
  'upstream_payment_required',
  'upstream_timeout',
]);

export function classifyFailure(error: ApiError): FailureKind {
  if (error.status === 499) return 'fatal';
  if (error.status === 429) return 'retry';
  if (error.code === 'context_length_exceeded' || error.code === 'unsupported_parameter') return 'next-model';
  if (error.code === 'model_overloaded' || error.code === 'model_unavailable') return 'busy';
  if (error.code && deploymentCodes.has(error.code)) return 'next-deployment';
  if (error.code && retryableCodes.has(error.code)) return 'retry';
  if (error.status === 502 || error.status === 503) return 'retry';
  if (error.status === 504) return 'next-deployment';
  return 'fatal';
}

/** Whether the failure says something about the deployment's health (and so counts for its circuit breaker). */
export function countsAgainstDeployment(kind: FailureKind): boolean {
  return kind === 'retry' || kind === 'next-deployment';
}

/** The upstream's requested wait (retry-after), in milliseconds, when it gave one. */
export function retryAfterMs(error: ApiError): number | undefined {
  const value = Number(error.headers['retry-after-ms'] ?? Number.NaN);
  if (Number.isFinite(value) && value >= 0) return value;
  const seconds = Number(error.headers['retry-after'] ?? Number.NaN);
  return Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : undefined;
}

export interface BackoffSettings {
  initialBackoffMs: number;
  maxBackoffMs: number;
}

/** Exponential backoff with jitter (75-100% of the step), for the n-th retry (1-based). */
export function backoffMs(retry: number, settings: BackoffSettings, random: () => number): number {
  const step = Math.min(settings.initialBackoffMs * 2 ** (retry - 1), settings.maxBackoffMs);
  return Math.round(step * (0.75 + 0.25 * random()));
}
