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
  /** JSON of the limits an operator set on this key: an account owner may tighten them, never loosen them. */
  operator_limits: string | null;
  /** JSON: for each limit set on the key, who set it ({ role: operator | owner, userId }); see limits/key-limits.ts. */
  limits_set_by: string | null;
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
  /**
   * JSON array of the attempts: model, deployment, outcome, status, code, wait and latency of each. Null when the
   * first attempt served the request without a wait: that attempt is then implied by the row
   * (request-log/attempts-column.ts).
   */
  attempts: string | null;
  cache_write_tokens: number | null;
  /** Upstream latency of the attempt that served the request (null when none did). */
  served_latency_ms: number | null;
  /** The data-plane endpoint that served the request (chat_completions, models, model…); null on rows before 0007. */
  endpoint: string | null;
}

/**
 * A usage rollup row (usage_hourly, usage_daily; layout in usage-rollup-layout.ts): the sums of the log rows of one
 * account, period, key, model, endpoint and provider. `model` is '' for requests that named none, `endpoint` and
 * `provider` '' where the log has none. lat_N counts the timed requests in latency bucket N.
 */
export interface UsageRollupTable extends UsageRollupSums {
  account_id: string;
  period_start: number;
  key_id: string;
  model: string;
  endpoint: string;
  provider: string;
}

/** A usage_model_hourly/daily row: the key rollup's rows of one account, period, model, endpoint and provider. */
export interface UsageModelRollupTable extends UsageRollupSums {
  account_id: string;
  period_start: number;
  model: string;
  endpoint: string;
  provider: string;
}

/** A usage_account_hourly/daily row: the key rollup's rows of one account and period. */
export interface UsageAccountRollupTable extends UsageRollupSums {
  account_id: string;
  period_start: number;
}

/** A usage_global_hourly/daily row: every account's key rollup rows of one period, model, endpoint and provider. */
export interface UsageGlobalRollupTable extends UsageRollupSums {
  period_start: number;
  model: string;
  endpoint: string;
  provider: string;
}

/** What every usage rollup row sums. */
export interface UsageRollupSums {
  requests: number;
  errors: number;
  cancelled: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cost_usd: number;
  /** Successful model calls, the only requests counted in latency figures. */
  latency_count: number;
  latency_sum_ms: number;
  lat_0: number;
  lat_1: number;
  lat_2: number;
  lat_3: number;
  lat_4: number;
  lat_5: number;
  lat_6: number;
  lat_7: number;
  lat_8: number;
  lat_9: number;
  lat_10: number;
  lat_11: number;
  lat_12: number;
  lat_13: number;
  lat_14: number;
  lat_15: number;
  lat_16: number;
  lat_17: number;
  lat_18: number;
  lat_19: number;
  lat_20: number;
  lat_21: number;
  lat_22: number;
  lat_23: number;
  lat_24: number;
  lat_25: number;
  lat_26: number;
  lat_27: number;
  lat_28: number;
  lat_29: number;
  lat_30: number;
}

/** A person who signs in to the console (account holders and operators). */
export interface UsersTable {
  id: string;
  /** Lower-cased; unique. */
  email: string;
  /** scrypt hash in the self-describing form of users/password.ts; null until an invitation is accepted. */
  password_hash: string | null;
  is_admin: number;
  disabled: number;
  created_at: number;
  last_sign_in_at: number | null;
  password_changed_at: number | null;
  /**
   * Set while the login is tied to the account whose invitation created it (an owner's invitation: whoever opened
   * the link chose the password, so the login proves nothing beyond that account). Cleared when its holder accepts
   * another invitation or an operator confirms the login.
   */
  invitation_account_id: string | null;
  /** Who made that invitation. */
  invitation_inviter_id: string | null;
}

/** Which accounts a user belongs to, and as what: owner (manages members) or member. */
export interface MembershipsTable {
  user_id: string;
  account_id: string;
  role: string;
  created_at: number;
}

/** Server-side console sessions; the cookie holds a random token, the table only its SHA-256. */
export interface SessionsTable {
  id: string;
  user_id: string;
  created_at: number;
  last_seen_at: number;
  expires_at: number;
}

/** Bearer tokens for scripts calling /api; they act as their user, optionally narrowed to one account. */
export interface ManagementTokensTable {
  id: string;
  user_id: string;
  account_id: string | null;
  name: string;
  /** SHA-256 of the token, hex. */
  token_hash: string;
  display: string;
  created_at: number;
  last_used_at: number | null;
  expires_at: number | null;
  revoked_at: number | null;
}

/** An invitation to join an account with a role; the link carries a random token, the table only its SHA-256. */
export interface InvitationsTable {
  id: string;
  account_id: string;
  email: string;
  role: string;
  token_hash: string;
  created_by: string | null;
  created_at: number;
  expires_at: number;
  accepted_at: number | null;
  revoked_at: number | null;
}

/** A stored `/v1/responses` answer (migrations 0008 and 0014): one row with its items. */
export interface ResponsesTable {
  id: string;
  account_id: string;
  /** The key that created it (its id only; the key itself is never stored). */
  key_id: string;
  model: string;
  /** The response this one continues; its items come before this one's when the conversation is replayed. */
  previous_response_id: string | null;
  created_at: number;
  /** Deleted by the retention job from then on, and never read after it. */
  expires_at: number;
  /** How many input items it has. */
  input_count: number;
  /** Bytes of JSON stored for it: the response object and every item. */
  stored_bytes: number;
  /** The response object as JSON, without `output` (stored-settings.ts). */
  response: string;
  /** Its input items, a JSON array. */
  input_items: string;
  /** Its output items, a JSON array. */
  output_items: string;
  /** The ids of its items (a JSON array of strings), whose keys in response_item_ids go with it. */
  item_ids: string;
  /**
   * NULL for a response stored whole; otherwise what the row stands for instead (migration 0015): `unstored`, a
   * response answered but too large to store (`response` holds `{"bytes","limit_bytes"}`, no items); `in_progress`,
   * one still streaming on some node (`response` holds its settings as it began, no items), replaced by the response
   * when it ends; `deleted`, one deleted while it streamed, which the response does not replace when it ends.
   */
  state: ResponseState | null;
  /**
   * On an `in_progress` row, until when the node serving its stream has said it still runs (migration 0017): past it
   * the row is read as failed. NULL on other rows.
   */
  streaming_until: number | null;
}

/** What a `responses` row that is not a whole stored response stands for (ResponsesTable.state). */
export type ResponseState = 'unstored' | 'in_progress' | 'deleted';

/** Finds a stored item by its id within the account (an `item_reference`): the key only, the item is on its response. */
export interface ResponseItemIdsTable {
  account_id: string;
  item_id: string;
  response_id: string;
}

export interface Database {
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  access_changes: AccessChangesTable;
  request_log: RequestLogTable;
  usage_hourly: UsageRollupTable;
  usage_daily: UsageRollupTable;
  usage_model_hourly: UsageModelRollupTable;
  usage_model_daily: UsageModelRollupTable;
  usage_account_hourly: UsageAccountRollupTable;
  usage_account_daily: UsageAccountRollupTable;
  usage_global_hourly: UsageGlobalRollupTable;
  usage_global_daily: UsageGlobalRollupTable;
  users: UsersTable;
  memberships: MembershipsTable;
  sessions: SessionsTable;
  management_tokens: ManagementTokensTable;
  invitations: InvitationsTable;
  responses: ResponsesTable;
  response_item_ids: ResponseItemIdsTable;
}
