import type { AttemptRecord } from '../routing/trace.js';
import { readAttempts } from './attempts-column.js';
import type { RequestLogRow } from './row-layout.js';

/** A request-log row as the CLI and the management API present it. */
export interface LogEntry {
  id: number;
  requestId: string;
  time: string;
  /** The data-plane endpoint that served the request; null on rows logged before the column existed. */
  endpoint: string | null;
  accountId: string;
  keyId: string;
  keyName: string;
  model: string;
  provider: string | null;
  upstreamModel: string | null;
  /** The model that answered when a fallback did (otherwise the requested model). */
  servedModel: string | null;
  deployment: string | null;
  attemptCount: number | null;
  attempts: AttemptRecord[];
  status: number;
  outcome: string;
  error: { type: string | null; code: string | null; message: string | null } | null;
  stream: boolean;
  latencyMs: number;
  ttftMs: number | null;
  usage: {
    promptTokens: number | null;
    completionTokens: number | null;
    totalTokens: number | null;
    cachedTokens: number | null;
    cacheWriteTokens: number | null;
    reasoningTokens: number | null;
    estimated: boolean;
  };
  costUsd: number | null;
  userAgent: string | null;
}

/** Bodies are not part of an entry, so summary rows (selected without them) are accepted too. */
export function toLogEntry(row: Omit<RequestLogRow, 'request_body' | 'response_body'>): LogEntry {
  return {
    id: Number(row.id),
    requestId: row.request_id,
    time: new Date(Number(row.created_at)).toISOString(),
    endpoint: row.endpoint,
    accountId: row.account_id,
    keyId: row.key_id,
    keyName: row.key_name,
    model: row.model,
    provider: row.provider,
    upstreamModel: row.upstream_model,
    servedModel: row.served_model,
    deployment: row.deployment,
    attemptCount: row.attempt_count,
    attempts: readAttempts(row),
    status: row.status,
    outcome: row.outcome,
    error:
      row.error_type || row.error_code || row.error_message
        ? { type: row.error_type, code: row.error_code, message: row.error_message }
        : null,
    stream: row.stream === 1,
    latencyMs: row.latency_ms,
    ttftMs: row.ttft_ms,
    usage: {
      promptTokens: row.prompt_tokens,
      completionTokens: row.completion_tokens,
      totalTokens: row.total_tokens,
      cachedTokens: row.cached_tokens,
      cacheWriteTokens: row.cache_write_tokens,
      reasoningTokens: row.reasoning_tokens,
      estimated: row.usage_estimated === 1,
    },
    costUsd: row.cost_usd === null ? null : Number(row.cost_usd),
    userAgent: row.user_agent,
  };
}
