import type { ApiError } from '../errors/api-error.js';
import type { Principal } from '../keys/authenticate.js';
import { attemptCount, type DispatchTrace, lastDeploymentAttempt } from '../routing/trace.js';
import type { TokenUsage } from '../usage/usage.js';
import { writeAttemptColumns } from './attempts-column.js';
import type { RequestLogInsert } from './row-layout.js';

/** Bodies kept in the log (only for accounts with body logging on) are cut at this size. */
const maxLoggedBodyCharacters = 1_000_000;

/** A data-plane request once it is over, as the pipeline (api/v1/pipeline/serve-request.ts) saw it. */
export interface FinishedRequest {
  readonly requestId: string;
  /** The endpoint that served it (its metrics label and log column); "unknown" for unrouted paths. */
  readonly endpoint: string;
  readonly startedAt: number;
  readonly startedAtPrecise: number;
  readonly finishedAtPrecise: number;
  readonly principal: Principal | undefined;
  readonly model: string | undefined;
  readonly stream: boolean;
  readonly status: number;
  readonly outcome: 'success' | 'error' | 'cancelled';
  readonly error: ApiError | undefined;
  readonly usage: TokenUsage | undefined;
  readonly costUsd: number | null | undefined;
  readonly firstTokenAt: number | undefined;
  readonly userAgent: string | undefined;
  readonly requestBody: string | undefined;
  readonly responseBody: string | undefined;
  /** Which deployments were tried and which one served (requests that reached dispatch). */
  readonly trace: DispatchTrace | undefined;
}

/**
 * Client-controlled text (a model name, an error quoting it) may hold NUL characters, which PostgreSQL cannot store;
 * one such row would fail its whole batch again and again. They become U+FFFD.
 */
const clean = (text: string): string => (text.includes('\u0000') ? text.replaceAll('\u0000', '\uFFFD') : text);

const cut = (text: string | undefined): string | null =>
  text === undefined ? null : text.length > maxLoggedBodyCharacters ? text.slice(0, maxLoggedBodyCharacters) : text;

/** The row for a finished request; undefined when the request never identified an account (nothing to log it to). */
export function toLogRow(record: FinishedRequest): RequestLogInsert | undefined {
  const principal = record.principal;
  if (!principal) return undefined;
  const usage = record.usage;
  const routing = record.trace;
  // What served the request, or the last deployment that tried to.
  const attempted = routing && (routing.served ?? lastDeploymentAttempt(routing));
  const row: RequestLogInsert = {
    request_id: record.requestId,
    created_at: record.startedAt,
    account_id: principal.accountId,
    key_id: principal.keyId,
    key_name: clean(principal.keyName),
    model: clean(record.model ?? ''),
    provider: attempted?.provider ?? null,
    upstream_model: attempted?.upstreamModel ?? null,
    status: record.status,
    outcome: record.outcome,
    error_type: record.error?.type ?? null,
    error_code: record.error?.code ?? null,
    error_message: record.error ? clean(record.error.message.slice(0, 1000)) : null,
    stream: record.stream ? 1 : 0,
    latency_ms: Math.round(record.finishedAtPrecise - record.startedAtPrecise),
    ttft_ms: record.firstTokenAt === undefined ? null : Math.round(record.firstTokenAt - record.startedAtPrecise),
    prompt_tokens: usage?.promptTokens ?? null,
    completion_tokens: usage?.completionTokens ?? null,
    cached_tokens: usage?.cachedTokens ?? null,
    reasoning_tokens: usage?.reasoningTokens ?? null,
    total_tokens: usage?.totalTokens ?? null,
    usage_estimated: usage?.estimated ? 1 : 0,
    cost_usd: record.costUsd ?? null,
    user_agent: record.userAgent?.slice(0, 300) ?? null,
    request_body: principal.logBodies ? cut(record.requestBody) : null,
    response_body: principal.logBodies ? cut(record.responseBody) : null,
    served_model: routing?.served?.model ?? null,
    deployment: attempted?.deployment ?? null,
    attempt_count: routing ? attemptCount(routing) : null,
    // Set with served_latency_ms by writeAttemptColumns, below: it needs the columns above.
    attempts: null,
    cache_write_tokens: usage?.cacheWriteTokens ?? null,
    served_latency_ms: null,
    endpoint: record.endpoint,
  };
  writeAttemptColumns(row, routing?.attempts);
  return row;
}
