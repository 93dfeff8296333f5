import { type ApiError, apiError, retryHeaders } from '../errors/api-error.js';
import type { LimitSettings } from './settings.js';

/**
 * The limiter contract. A request is admitted against its account's and its key's limits together (all or
 * nothing), with its tokens and cost reserved from an estimate; once the request is over, `settle` replaces the
 * estimate with what was really used and releases its concurrency slot.
 */

export interface LimitSubject {
  /** Stable id: `account:<id>` or `key:<id>`. */
  id: string;
  /** For messages: "account acme", "key web-prod". */
  label: string;
  limits: LimitSettings;
}

export interface AdmissionRequest {
  /** Shared by both subjects of a request (the account id); keeps every counter of a request in one Redis slot. */
  partition: string;
  subjects: readonly LimitSubject[];
  estimatedTokens: number;
  estimatedCostUsd: number;
}

export interface Usage {
  tokens: number;
  costUsd: number;
}

export interface Admission {
  /** x-ratelimit-* headers for the response (empty when no rate limit applies). */
  headers: Readonly<Record<string, string>>;
  /**
   * Records actual use and releases the concurrency slot. Safe to call once; never throws. Where the counters are
   * shared (`shared`), the promise resolves once the settlement has reached them, or has failed to (never rejects).
   */
  settle(actual: Usage): void | Promise<void>;
  /**
   * Whether the counters live where other workers or nodes read them (the primary of --workers, Redis). The pipeline
   * then holds the answer's last byte until `settle`'s promise resolves, so that a client's next request, on whichever
   * worker or node, finds the slot free and the tokens and spend of its last request already settled.
   */
  readonly shared?: boolean;
}

export interface Limiter {
  /** Resolves with an admission or throws the 429 (or 503) ApiError that says which limit and when to retry. */
  admit(request: AdmissionRequest): Promise<Admission>;
  close(): Promise<void>;
}

export const admittedWithoutLimits: Admission = Object.freeze({ headers: Object.freeze({}), settle: () => {} });

export type LimitKind = 'requests' | 'tokens' | 'concurrency' | 'daily_budget' | 'monthly_budget';

/** What a window reports for the response headers: the most constrained subject is shown. */
export interface WindowState {
  limit: number;
  remaining: number;
  /** Milliseconds until the window has forgotten everything counted now. */
  resetMs: number;
}

/** OpenAI's duration style for reset headers: "12ms", "1s", "6m0s". */
export function formatResetDuration(milliseconds: number): string {
  if (milliseconds < 1000) return `${Math.max(0, Math.ceil(milliseconds))}ms`;
  const seconds = Math.ceil(milliseconds / 1000);
  if (seconds < 60) return `${seconds}s`;
  return `${Math.floor(seconds / 60)}m${seconds % 60}s`;
}

/** Reads back formatResetDuration's form ("12ms", "1s", "6m0s"); undefined for anything else. */
export function parseResetDuration(text: string): number | undefined {
  const match = /^(?:(\d+)m)?(\d+)(ms|s)$/.exec(text);
  if (!match) return undefined;
  const minutes = Number(match[1] ?? 0);
  const amount = Number(match[2]);
  return minutes * 60_000 + (match[3] === 'ms' ? amount : amount * 1000);
}

export function rateLimitHeaders(
  requests: WindowState | undefined,
  tokens: WindowState | undefined,
): Record<string, string> {
  const headers: Record<string, string> = {};
  if (requests) {
    headers['x-ratelimit-limit-requests'] = String(requests.limit);
    headers['x-ratelimit-remaining-requests'] = String(Math.max(0, Math.floor(requests.remaining)));
    headers['x-ratelimit-reset-requests'] = formatResetDuration(requests.resetMs);
  }
  if (tokens) {
    headers['x-ratelimit-limit-tokens'] = String(tokens.limit);
    headers['x-ratelimit-remaining-tokens'] = String(Math.max(0, Math.floor(tokens.remaining)));
    headers['x-ratelimit-reset-tokens'] = formatResetDuration(tokens.resetMs);
  }
  return headers;
}

/** Keeps, per kind, the state with the least remaining (what a client should pace itself by). */
export function tighter(current: WindowState | undefined, candidate: WindowState): WindowState {
  return current === undefined || candidate.remaining < current.remaining ? candidate : current;
}

function describeWait(milliseconds: number): string {
  return milliseconds < 1000 ? `${Math.ceil(milliseconds)}ms` : `${(milliseconds / 1000).toFixed(1)}s`;
}

export function rateLimitError(
  kind: 'requests' | 'tokens' | 'concurrency',
  subject: LimitSubject,
  limit: number,
  retryAfterMs: number,
  headers: Record<string, string>,
  requested?: number,
): ApiError {
  const what =
    kind === 'requests'
      ? `requests per minute (limit ${limit})`
      : kind === 'tokens'
        ? `tokens per minute (limit ${limit}${requested === undefined ? '' : `, this request needs about ${requested}`})`
        : `concurrent requests (limit ${limit})`;
  return apiError(
    kind === 'tokens' ? 'tokens_rate_limited' : 'requests_rate_limited',
    `Rate limit reached for ${subject.label} on ${what}. Please try again in ${describeWait(retryAfterMs)}.`,
    { headers: { ...headers, ...retryHeaders(retryAfterMs) } },
  );
}

/** A request bigger than the whole per-minute token allowance can never pass: say so, do not ask for a retry. */
export function requestTooLargeForLimit(
  subject: LimitSubject,
  limit: number,
  requested: number,
  headers: Record<string, string>,
): ApiError {
  return apiError(
    'tokens_rate_limited',
    `Request too large for ${subject.label}: tokens per minute limit is ${limit}, this request needs about ${requested}. Reduce the prompt or max_tokens.`,
    { headers: { ...headers, 'x-should-retry': 'false' } },
  );
}

export function quotaError(
  kind: 'daily_budget' | 'monthly_budget',
  subject: LimitSubject,
  budgetUsd: number,
  resetsAt: Date,
): ApiError {
  const period = kind === 'daily_budget' ? 'daily' : 'monthly';
  return apiError(
    'insufficient_quota',
    `You exceeded your current quota: the ${period} budget of $${budgetUsd.toFixed(2)} for ${subject.label} is used up. It resets at ${resetsAt.toISOString()}.`,
    // Retrying cannot help before the period ends; tell the SDKs not to.
    { headers: { 'x-should-retry': 'false' } },
  );
}

export function limitsUnavailableError(): ApiError {
  return apiError(
    'limits_unavailable',
    'The budget store is unreachable, so spending cannot be checked; the request was refused. Retry shortly.',
    { headers: retryHeaders(1000) },
  );
}

/** UTC period boundaries for budgets. */
export function periodKeys(now: number): { day: string; month: string; dayEnd: Date; monthEnd: Date } {
  const date = new Date(now);
  const year = date.getUTCFullYear();
  const month = date.getUTCMonth();
  const day = date.getUTCDate();
  const pad = (value: number) => String(value).padStart(2, '0');
  return {
    day: `${year}-${pad(month + 1)}-${pad(day)}`,
    month: `${year}-${pad(month + 1)}`,
    dayEnd: new Date(Date.UTC(year, month, day + 1)),
    monthEnd: new Date(Date.UTC(year, month + 1, 1)),
  };
}

/** Budgets are counted in micro-dollars so that counters stay exact integers. */
export const toMicroDollars = (dollars: number): number => Math.round(dollars * 1_000_000);
