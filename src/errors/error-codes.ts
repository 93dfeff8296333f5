/**
 * Every error the gateway answers with, by code: its HTTP status and OpenAI `type` in one table, so an error is built
 * by naming its code (errors/api-error.ts) and rendered in each surface's shape from the same row
 * (errors/render-openai.ts, errors/render-anthropic.ts). The code is what clients see in `error.code`, except where
 * `wireCode` says otherwise (`null`: OpenAI sends no code for that error).
 */

/** Anthropic's error types (`{"type":"error","error":{"type":…}}` on /v1/messages). */
export type AnthropicErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'billing_error'
  | 'permission_error'
  | 'not_found_error'
  | 'request_too_large'
  | 'rate_limit_error'
  | 'timeout_error'
  | 'api_error'
  | 'overloaded_error';

export interface ErrorCodeEntry {
  status: number;
  /** OpenAI's `error.type`. */
  type: string;
  /** The `error.code` clients see, when it is not the table's code. */
  wireCode?: string | null;
}

const invalid = (status = 400): ErrorCodeEntry => ({ status, type: 'invalid_request_error' });
const server = (status: number): ErrorCodeEntry => ({ status, type: 'server_error' });
const notFound = (): ErrorCodeEntry => ({ status: 404, type: 'not_found_error' });
const permission = (): ErrorCodeEntry => ({ status: 403, type: 'permission_error' });

export const errorCodes = {
  // The request itself (400 and its neighbours).
  invalid_request: { status: 400, type: 'invalid_request_error', wireCode: null },
  invalid_value: invalid(),
  integer_above_max_value: invalid(),
  integer_below_min_value: invalid(),
  decimal_above_max_value: invalid(),
  decimal_below_min_value: invalid(),
  empty_array: invalid(),
  array_above_max_length: invalid(),
  string_above_max_length: invalid(),
  object_above_max_properties: invalid(),
  invalid_type: invalid(),
  invalid_encoding: invalid(),
  missing_required_parameter: invalid(),
  unsupported_parameter: invalid(),
  unsupported_value: invalid(),
  unsupported_content: invalid(),
  context_length_exceeded: invalid(),
  incomplete_body: { status: 400, type: 'invalid_request_error', wireCode: null },
  malformed_request: invalid(),
  request_timeout: invalid(408),
  request_too_large: { status: 413, type: 'invalid_request_error' },
  unsupported_media_type: invalid(415),
  method_not_allowed: invalid(405),
  unknown_url: { status: 404, type: 'invalid_request_error' },
  model_not_found: { status: 404, type: 'invalid_request_error' },
  /** A model configured without the capability the endpoint needs (an embedding model asked to chat, or the reverse). */
  unsupported_model: invalid(),
  /** The deployment's provider has no such API (e.g. Anthropic and embeddings or legacy text completions). */
  unsupported_endpoint: invalid(),
  previous_response_not_found: invalid(404),
  response_not_found: invalid(404),
  item_not_found: invalid(404),
  stored_response_too_large: invalid(),
  conversation_too_large: invalid(),
  /** A stored response still streaming on another node, named where only a finished one will do. */
  response_in_progress: invalid(409),

  // Who is calling.
  invalid_api_key: { status: 401, type: 'invalid_request_error' },
  /** No key, or an Authorization header that is not `Bearer <key>` (OpenAI sends no code for these). */
  invalid_authorization_header: { status: 401, type: 'invalid_request_error', wireCode: null },
  invalid_token: { status: 401, type: 'invalid_request_error' },
  signature_missing: { status: 401, type: 'invalid_request_error' },
  signature_invalid: { status: 401, type: 'invalid_request_error' },
  invalid_metrics_token: { status: 401, type: 'invalid_request_error' },
  invalid_credentials: { status: 401, type: 'invalid_request_error' },
  not_signed_in: { status: 401, type: 'invalid_request_error' },
  /** Two session cookies in one request: never read as either (cookies.ts). */
  ambiguous_session_cookie: invalid(),
  account_disabled: permission(),
  csrf_token_invalid: permission(),
  limit_set_by_operator: permission(),
  signed_in_as_someone_else: permission(),
  admin_only: permission(),
  owner_only: permission(),
  session_only: permission(),
  cross_site_request: permission(),

  // Limits and budgets (OpenAI's own types for request and token limits).
  requests_rate_limited: { status: 429, type: 'requests', wireCode: 'rate_limit_exceeded' },
  tokens_rate_limited: { status: 429, type: 'tokens', wireCode: 'rate_limit_exceeded' },
  rate_limit_exceeded: { status: 429, type: 'rate_limit_error' },
  insufficient_quota: { status: 429, type: 'insufficient_quota' },
  too_many_sign_in_attempts: { status: 429, type: 'rate_limit_error' },
  too_many_invitations: { status: 429, type: 'rate_limit_error' },
  limits_unavailable: server(503),

  // The client went away; logged, never sent (nobody is listening).
  client_closed_request: invalid(499),

  // Routing and upstream providers.
  no_healthy_deployment: server(503),
  upstream_unreachable: server(502),
  upstream_error: server(502),
  upstream_malformed_response: server(502),
  upstream_response_too_large: server(502),
  upstream_auth_failed: server(502),
  upstream_payment_required: server(502),
  upstream_not_found: server(502),
  upstream_overloaded: { status: 503, type: 'server_error' },
  upstream_timeout: server(504),
  /** An upstream's refusal of the request itself, passed on with the upstream's own status, type and code. */
  upstream_rejected_request: { status: 400, type: 'invalid_request_error', wireCode: null },

  // The built-in local model.
  model_overloaded: server(503),
  model_unavailable: server(503),
  local_generation_failed: server(500),

  // The gateway itself.
  internal_error: { status: 500, type: 'server_error', wireCode: null },
  service_unavailable: server(503),
  server_shutting_down: server(503),
  not_ready: server(503),
  verification_keys_unavailable: server(503),
  console_not_built: server(503),

  // The management API's resources.
  account_not_found: notFound(),
  key_not_found: notFound(),
  user_not_found: notFound(),
  member_not_found: notFound(),
  token_not_found: notFound(),
  invitation_not_found: notFound(),
  invitation_invalid: notFound(),
  request_not_found: notFound(),
  model_not_configured: invalid(),
  model_not_allowed: invalid(),
  key_inactive: invalid(),
  key_already_rotated: invalid(409),
  invalid_key: invalid(),
  invalid_json: invalid(),
  password_too_weak: invalid(),
  password_too_short: invalid(),
  invalid_email: invalid(),
  invalid_role: invalid(),
  password_too_long: invalid(),
  missing_body: invalid(),
  account_exists: invalid(409),
  user_exists: invalid(409),
  last_admin: invalid(409),
  last_owner: invalid(409),
  login_created_by_invitation: invalid(409),
  too_many_pending_invitations: invalid(409),
} as const satisfies Record<string, ErrorCodeEntry>;

export type ErrorCode = keyof typeof errorCodes;

/**
 * Anthropic's status and type for an error, by the gateway's status, with
 * gateway faults Anthropic has no status for mapped to its own (502 -> 500 api_error, 503 -> 529 overloaded_error),
 * per anthropic-sdk-typescript's error classes and the API's errors page.
 */
const anthropicByStatus: Readonly<Record<number, { status: number; type: AnthropicErrorType }>> = {
  400: { status: 400, type: 'invalid_request_error' },
  401: { status: 401, type: 'authentication_error' },
  402: { status: 402, type: 'billing_error' },
  403: { status: 403, type: 'permission_error' },
  404: { status: 404, type: 'not_found_error' },
  408: { status: 408, type: 'timeout_error' },
  413: { status: 413, type: 'request_too_large' },
  429: { status: 429, type: 'rate_limit_error' },
  431: { status: 431, type: 'request_too_large' },
  500: { status: 500, type: 'api_error' },
  502: { status: 500, type: 'api_error' },
  503: { status: 529, type: 'overloaded_error' },
  504: { status: 504, type: 'timeout_error' },
  529: { status: 529, type: 'overloaded_error' },
};

/**
 * The status and type an error has on /v1/messages, from its status alone: every code's status names the Anthropic
 * type Anthropic's own API gives that kind of error (test/unit/messages-errors.test.ts).
 */
export function anthropicShapeOf(status: number): { status: number; type: AnthropicErrorType } {
  const byStatus = anthropicByStatus[status];
  const type = byStatus?.type ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
  if (type === 'overloaded_error') return { status: 529, type };
  return { status: byStatus?.status ?? Math.min(status, 500), type };
}
