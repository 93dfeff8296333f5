import type { Principal } from '../keys/authenticate.js';
import { attemptCount, type DispatchTrace, lastDeploymentAttempt } from '../routing/dispatch.js';
import type { ApiError } from '../server/errors.js';
import type { TokenUsage } from '../usage/usage.js';
import { writeAttemptColumns } from './attempts-column.js';
import type { RequestLogInsert } from './row-layout.js';

/** Bodies kept in the log (only for accounts with body logging on) are cut at this size. */
const maxLoggedBodyCharacters = 1_000_000;

/** What the data plane learns about one request while serving it; becomes one request-log row. */
export interface RequestRecord {
  requestId: string;
  /** The data-plane route, for metrics and the row's endpoint column ("unknown" until the path is recognised). */
  route: string;
  startedAt: number;
  startedAtPrecise: number;
  principal?: Principal;
  model?: string;
  provider?: string;
  upstreamModel?: string;
  stream: boolean;
  status: number;
  outcome: 'success' | 'error' | 'cancelled';
  error?: ApiError;
  usage?: TokenUsage;
  costUsd?: number | null;
  firstTokenAt?: number;
  userAgent: string | undefined;
  requestBody?: string;
  responseBody?: string;
  /** Which deployments were tried and which one served (data-plane requests that reached the router). */
  routing?: DispatchTrace;
}

/**
 * Client-controlled text (a model name, an error quoting it) may hold NUL characters, which PostgreSQL cannot store;
 * one such row would fail its whole batch again and again. They become U+FFFD.
 */
const clean = (text: string): string => (text.includes('\u0000') ? text.replaceAll('\u0000', '\uFFFD') : text);

const cut = (text: string | undefined): string | null =>
  text === undefined ? null : text.length > maxLoggedBodyCharacters ? text.slice(0, maxLoggedBodyCharacters) : text;

/** The row for a finished request; undefined when the request never identified an account (nothing to log it to). */
export function toLogRow(record: RequestRecord, finishedAtPrecise: number): RequestLogInsert | undefined {
  const principal = record.principal;
  if (!principal) return undefined;
  const usage = record.usage;
  const routing = record.routing;
  const row: RequestLogInsert = {
    request_id: record.requestId,
    created_at: record.startedAt,
    account_id: principal.accountId,
    key_id: principal.keyId,
    key_name: clean(principal.keyName),
    model: clean(record.model ?? ''),
    provider: record.provider ?? null,
    upstream_model: record.upstreamModel ?? null,
    status: record.status,
    outcome: record.outcome,
    error_type: record.error?.type ?? null,
    error_code: record.error?.code ?? null,
    error_message: record.error ? clean(record.error.message.slice(0, 1000)) : null,
    stream: record.stream ? 1 : 0,
    latency_ms: Math.round(finishedAtPrecise - record.startedAtPrecise),
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
    deployment: routing ? (routing.served?.deployment ?? lastDeploymentAttempt(routing)?.deployment ?? null) : null,
    attempt_count: routing ? attemptCount(routing) : null,
    // Set with served_latency_ms by writeAttemptColumns, below: it needs the columns above.
    attempts: null,
    cache_write_tokens: usage?.cacheWriteTokens ?? null,
    served_latency_ms: null,
    endpoint: record.route,
  };
  writeAttemptColumns(row, routing?.attempts);
  return row;
}
