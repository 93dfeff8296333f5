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
  | 'permission_error'
  | 'not_found_error'
  | 'request_too_large'
  | 'rate_limit_error'
  | 'api_error'
  | 'overloaded_error';

export interface ErrorCodeEntry {
  status: number;
  /** OpenAI's `error.type`. */
  type: string;
  /** The `error.code` clients see, when it is not the table's code. */
  wireCode?: string | null;
  /** Anthropic's type for this error, when the status alone does not say it (see anthropicTypeOf). */
  anthropicType?: AnthropicErrorType;
}

const invalid = (status = 400): ErrorCodeEntry => ({ status, type: 'invalid_request_error' });
const server = (status: number, anthropicType?: AnthropicErrorType): ErrorCodeEntry =>
  anthropicType ? { status, type: 'server_error', anthropicType } : { status, type: 'server_error' };
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
  request_too_large: { status: 413, type: 'invalid_request_error', anthropicType: 'request_too_large' },
  unsupported_media_type: invalid(415),
  method_not_allowed: invalid(405),
  unknown_url: { status: 404, type: 'invalid_request_error', anthropicType: 'not_found_error' },
  model_not_found: { status: 404, type: 'invalid_request_error', anthropicType: 'not_found_error' },

  // Who is calling.
  invalid_api_key: { status: 401, type: 'invalid_request_error', anthropicType: 'authentication_error' },
  /** No key, or an Authorization header that is not `Bearer <key>` (OpenAI sends no code for these). */
  invalid_authorization_header: {
    status: 401,
    type: 'invalid_request_error',
    wireCode: null,
    anthropicType: 'authentication_error',
  },
  invalid_token: { status: 401, type: 'invalid_request_error', anthropicType: 'authentication_error' },
  invalid_credentials: { status: 401, type: 'invalid_request_error', anthropicType: 'authentication_error' },
  not_signed_in: { status: 401, type: 'invalid_request_error', anthropicType: 'authentication_error' },
  user_disabled: permission(),
  account_disabled: permission(),
  csrf_token_invalid: permission(),
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
  limits_unavailable: server(503),

  // The client went away; logged, never sent (nobody is listening).
  client_closed_request: invalid(499),

  // Routing and upstream providers.
  no_healthy_deployment: server(503, 'overloaded_error'),
  upstream_unavailable: server(502),
  upstream_unreachable: server(502),
  upstream_error: server(502),
  upstream_malformed_response: server(502),
  upstream_response_too_large: server(502),
  upstream_auth_failed: server(502),
  upstream_payment_required: server(502),
  upstream_not_found: server(502),
  upstream_overloaded: { status: 503, type: 'server_error', anthropicType: 'overloaded_error' },
  upstream_timeout: server(504),
  /** An upstream's refusal of the request itself, passed on with the upstream's own status, type and code. */
  upstream_rejected_request: { status: 400, type: 'invalid_request_error', wireCode: null },

  // The built-in local model.
  model_overloaded: server(503, 'overloaded_error'),
  model_unavailable: server(503),
  local_generation_failed: server(500),

  // The gateway itself.
  internal_error: { status: 500, type: 'server_error', wireCode: null },
  service_unavailable: server(503),
  server_shutting_down: server(503, 'overloaded_error'),
  not_ready: server(503),
  console_not_built: server(503),

  // The management API's resources.
  not_found: notFound(),
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
  password_too_short: invalid(),
  invalid_email: invalid(),
  invalid_role: invalid(),
  password_too_long: invalid(),
  missing_body: invalid(),
  conflict: invalid(409),
  account_exists: invalid(409),
  user_exists: invalid(409),
  last_admin: invalid(409),
  last_owner: invalid(409),
} as const satisfies Record<string, ErrorCodeEntry>;

export type ErrorCode = keyof typeof errorCodes;

/** Anthropic's type for a status, where the table row does not name one. */
export function anthropicTypeOf(entry: ErrorCodeEntry, status: number): AnthropicErrorType {
  if (entry.anthropicType) return entry.anthropicType;
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 413) return 'request_too_large';
  if (status === 429) return 'rate_limit_error';
  if (status === 529) return 'overloaded_error';
  if (status >= 500) return 'api_error';
  return 'invalid_request_error';
}
