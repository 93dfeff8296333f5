import type { Principal } from '../keys/authenticate.js';
import { type AttemptRecord, attemptCount, type DispatchTrace, lastDeploymentAttempt } from '../routing/dispatch.js';
import type { ApiError } from '../server/errors.js';
import type { TokenUsage } from '../usage/usage.js';
import type { RequestLogInsert } from './row-layout.js';

/** Bodies kept in the log (only for accounts with body logging on) are cut at this size. */
const maxLoggedBodyCharacters = 1_000_000;

/** What the data plane learns about one request while serving it; becomes one request-log row. */
export interface RequestRecord {
  requestId: string;
  /** The data-plane route, for metrics ("unknown" until the path is recognised). */
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
    attempts: null,
    cache_write_tokens: usage?.cacheWriteTokens ?? null,
    served_latency_ms: null,
  };
  const attempts = routing?.attempts;
  if (attempts && attempts.length > 0) {
    const served = attempts.findLast((attempt) => attempt.outcome === 'success');
    if (served && Number.isFinite(served.latencyMs)) row.served_latency_ms = served.latencyMs;
    if (!(attempts.length === 1 && served && impliedByRow(served, row))) row.attempts = attemptsJson(attempts);
  }
  return row;
}

/**
 * Whether the row's own columns say all the attempt says: a success with status 200 after no wait, by the row's
 * served model, deployment, provider and upstream model, its latency in served_latency_ms. The single attempt of such
 * a row is not written as JSON (request-log/entry.ts rebuilds it, equal field for field: `impliedAttempts`).
 */
function impliedByRow(attempt: AttemptRecord, row: RequestLogInsert): boolean {
  return (
    attempt.status === 200 &&
    attempt.code === null &&
    attempt.waitedMs === 0 &&
    Number.isFinite(attempt.latencyMs) &&
    attempt.model === row.served_model &&
    attempt.deployment === row.deployment &&
    attempt.provider === row.provider &&
    attempt.upstreamModel === row.upstream_model &&
    row.attempt_count === 1
  );
}

/**
 * Names as JSON strings, for the names an attempt repeats on every request (its model, deployment, provider and
 * upstream model all come from the configuration). Bounded, so that it cannot grow with anything a client sends.
 */
const quotedNames = new Map<string, string>();
const maxQuotedNames = 1_000;

function quoted(name: string): string {
  let json = quotedNames.get(name);
  if (json === undefined) {
    json = JSON.stringify(name);
    if (quotedNames.size < maxQuotedNames) quotedNames.set(name, json);
  }
  return json;
}

/** A number as JSON.stringify writes it (NaN and the infinities are null). */
const jsonNumber = (value: number): string => (Number.isFinite(value) ? String(value) : 'null');

/**
 * The same text as JSON.stringify(attempts), written out field by field: JSON.stringify walks each object's
 * properties generically and quotes every string again (~1 µs per request on the AMD machine of
 * docs/performance.md, against ~0.2 µs for this). A unit test compares the two.
 */
export function attemptsJson(attempts: readonly AttemptRecord[]): string {
  let json = '[';
  for (let index = 0; index < attempts.length; index++) {
    const attempt = attempts[index] as AttemptRecord;
    if (index > 0) json += ',';
    json +=
      `{"model":${quoted(attempt.model)},"deployment":${quoted(attempt.deployment)},` +
      `"provider":${quoted(attempt.provider)},"upstreamModel":${quoted(attempt.upstreamModel)},` +
      `"outcome":${quoted(attempt.outcome)},"status":${jsonNumber(attempt.status)},` +
      `"code":${attempt.code === null ? 'null' : JSON.stringify(attempt.code)},` +
      `"waitedMs":${jsonNumber(attempt.waitedMs)},"latencyMs":${jsonNumber(attempt.latencyMs)}}`;
  }
  return `${json}]`;
}
