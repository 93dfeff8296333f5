import type { Generated } from 'kysely';

/**
 * Table types for Kysely. Times are integer milliseconds since the epoch and booleans are 0/1 integers, so SQLite
 * and PostgreSQL store them the same way and repositories never convert per engine.
 */

export interface AccountsTable {
  id: string;
  name: string;
  /** JSON array of model names; ["*"] means every configured model. */
  allowed_models: string;
  disabled: number;
  /** Whether request and response bodies are kept in this account's request log. */
  log_bodies: number;
  created_at: number;
  /** JSON of the limits set on this account (see limits/settings.ts); null = configured defaults. */
  limits: string | null;
}

export interface ApiKeysTable {
  id: string;
  account_id: string;
  name: string;
  environment: string | null;
  /** HMAC-SHA256(key, server secret), hex. The key itself is never stored. */
  hmac: string;
  display: string;
  /** JSON array narrowing the account's models, or null to inherit them. */
  allowed_models: string | null;
  created_at: number;
  last_used_at: number | null;
  expires_at: number | null;
  revoked_at: number | null;
  /** Set when the key was rotated: the id of its successor. */
  replaced_by: string | null;
  /** JSON of the limits set on this key; null = configured defaults. */
  limits: string | null;
}

/** An append-only feed of "something about keys or access changed", polled by every server process. */
export interface AccessChangesTable {
  id: Generated<number>;
  created_at: number;
  kind: string;
  subject: string;
}

export interface RequestLogTable {
  id: Generated<number>;
  request_id: string;
  created_at: number;
  account_id: string;
  key_id: string;
  key_name: string;
  model: string;
  provider: string | null;
  upstream_model: string | null;
  status: number;
  /** success | error | cancelled */
  outcome: string;
  error_type: string | null;
  error_code: string | null;
  error_message: string | null;
  stream: number;
  latency_ms: number;
  ttft_ms: number | null;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  cached_tokens: number | null;
  reasoning_tokens: number | null;
  total_tokens: number | null;
  /** 1 when token counts were estimated because the upstream reported no usage. */
  usage_estimated: number;
  cost_usd: number | null;
  user_agent: string | null;
  request_body: string | null;
  response_body: string | null;
  /** The public model that answered: the requested one, or a fallback. */
  served_model: string | null;
  /** The deployment (`provider/upstream_model`) that answered, or the last one tried. */
  deployment: string | null;
  /** Upstream attempts made (retries and failovers included). */
  attempt_count: number | null;
  /** JSON array of the attempts: model, deployment, outcome, status, code, wait and latency of each. */
  attempts: string | null;
  cache_write_tokens: number | null;
}

export interface Database {
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  access_changes: AccessChangesTable;
  request_log: RequestLogTable;
}
