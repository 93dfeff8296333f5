import { describe, expect, it } from 'vitest';
import {
  apiError,
  modelNotFound,
  payloadTooLarge,
  toApiError,
  upstreamRejectedRequest,
} from '../../src/errors/api-error.js';
import { anthropicShapeOf, type ErrorCode, errorCodes } from '../../src/errors/error-codes.js';
import { renderAnthropicError } from '../../src/errors/render-anthropic.js';

/** An error of the table's code that has this status, or an upstream refusal passed on with it. */
const error = (status: number, code: string | null = null, message = 'm') => {
  const entry = (Object.keys(errorCodes) as ErrorCode[]).find((key) => key === code);
  return entry ? apiError(entry, message) : upstreamRejectedRequest({ status, code: code ?? undefined }, message);
};

describe('errors in Anthropic’s shape', () => {
  it('gives every code of the table an Anthropic status', () => {
    const anthropicStatuses = new Set([
      400, 401, 402, 403, 404, 405, 408, 409, 413, 415, 422, 429, 431, 499, 500, 504, 529,
    ]);
    for (const code of Object.keys(errorCodes) as ErrorCode[]) {
      const entry: { status: number; type: string } = errorCodes[code];
      expect(anthropicStatuses.has(anthropicShapeOf(entry.status).status), code).toBe(true);
    }
  });

  it('maps each status to Anthropic’s type and status', () => {
    const shapes = Object.fromEntries(
      [400, 401, 402, 403, 404, 405, 408, 409, 413, 422, 429, 431, 499, 500, 502, 503, 504, 529, 418, 507].map(
        (status) => [status, anthropicShapeOf(status)],
      ),
    );
    expect(shapes).toEqual({
      400: { status: 400, type: 'invalid_request_error' },
      401: { status: 401, type: 'authentication_error' },
      402: { status: 402, type: 'billing_error' },
      403: { status: 403, type: 'permission_error' },
      404: { status: 404, type: 'not_found_error' },
      405: { status: 405, type: 'invalid_request_error' },
      408: { status: 408, type: 'timeout_error' },
      409: { status: 409, type: 'invalid_request_error' },
      413: { status: 413, type: 'request_too_large' },
      422: { status: 422, type: 'invalid_request_error' },
      429: { status: 429, type: 'rate_limit_error' },
      431: { status: 431, type: 'request_too_large' },
      499: { status: 499, type: 'invalid_request_error' },
      500: { status: 500, type: 'api_error' },
      502: { status: 500, type: 'api_error' },
      503: { status: 529, type: 'overloaded_error' },
      504: { status: 504, type: 'timeout_error' },
      529: { status: 529, type: 'overloaded_error' },
      418: { status: 418, type: 'invalid_request_error' },
      507: { status: 500, type: 'api_error' },
    });
  });

  it('gives each kind of error the type Anthropic’s API gives it', () => {
    const typeOf = (code: ErrorCode) => JSON.parse(renderAnthropicError(apiError(code, 'm')).body).error.type;
    expect(
      Object.fromEntries(
        (
          [
            'invalid_value',
            'context_length_exceeded',
            'invalid_api_key',
            'invalid_authorization_header',
            'account_disabled',
            'model_not_found',
            'unknown_url',
            'request_too_large',
            'request_timeout',
            'requests_rate_limited',
            'insufficient_quota',
            'upstream_error',
            'upstream_timeout',
            'no_healthy_deployment',
            'internal_error',
          ] as const
        ).map((code) => [code, typeOf(code)]),
      ),
    ).toEqual({
      invalid_value: 'invalid_request_error',
      context_length_exceeded: 'invalid_request_error',
      invalid_api_key: 'authentication_error',
      invalid_authorization_header: 'authentication_error',
      account_disabled: 'permission_error',
      model_not_found: 'not_found_error',
      unknown_url: 'not_found_error',
      request_too_large: 'request_too_large',
      request_timeout: 'timeout_error',
      requests_rate_limited: 'rate_limit_error',
      insufficient_quota: 'rate_limit_error',
      upstream_error: 'api_error',
      upstream_timeout: 'timeout_error',
      no_healthy_deployment: 'overloaded_error',
      internal_error: 'api_error',
    });
  });

  it('renders the body, status and headers, keeping retry headers and the request id', () => {
    const overloaded = apiError('upstream_overloaded', 'The upstream provider "claude" is overloaded: Overloaded', {
      headers: { 'retry-after': '7', 'retry-after-ms': '7000' },
    });
    const rendered = renderAnthropicError(overloaded, 'req_1');
    expect(rendered.status).toBe(529);
    expect(rendered.headers).toEqual({
      'x-request-id': 'req_1',
      'request-id': 'req_1',
      'content-type': 'application/json',
      'retry-after': '7',
      'retry-after-ms': '7000',
    });
    expect(JSON.parse(rendered.body)).toEqual({
      type: 'error',
      error: { type: 'overloaded_error', message: 'The upstream provider "claude" is overloaded: Overloaded' },
      request_id: 'req_1',
    });
    const budget = apiError('insufficient_quota', 'You exceeded your current quota.', {
      headers: { 'x-should-retry': 'false' },
    });
    expect(renderAnthropicError(budget).headers['x-should-retry']).toBe('false');
    expect(JSON.parse(renderAnthropicError(modelNotFound('x')).body).error.type).toBe('not_found_error');
    expect(renderAnthropicError(payloadTooLarge(10)).status).toBe(413);
    // Anything not raised on purpose is an opaque 500, as on the OpenAI surface.
    const crash = renderAnthropicError(new TypeError('secret detail'));
    expect(crash.status).toBe(500);
    expect(crash.body).not.toContain('secret detail');
    expect(JSON.parse(crash.body).error.type).toBe('api_error');
    expect(toApiError(new Error('x')).status).toBe(500);
  });

  it('words a context overflow the way Claude Code recognizes, and tells Anthropic clients how to send a key', () => {
    const overflow = error(400, 'context_length_exceeded', "This model's maximum context length is 128000 tokens.");
    expect(JSON.parse(renderAnthropicError(overflow).body).error.message).toBe(
      "prompt is too long: This model's maximum context length is 128000 tokens.",
    );
    const anthropicOverflow = error(400, 'context_length_exceeded', 'prompt is too long: 1 > 0');
    expect(JSON.parse(renderAnthropicError(anthropicOverflow).body).error.message).toBe('prompt is too long: 1 > 0');
    const noKey = JSON.parse(
      renderAnthropicError(apiError('invalid_authorization_header', 'The x-api-key header is not accepted here.')).body,
    );
    expect(noKey.error.type).toBe('authentication_error');
    expect(noKey.error.message).toContain('ANTHROPIC_AUTH_TOKEN');
    const revoked = JSON.parse(renderAnthropicError(apiError('invalid_api_key', 'The API key has been revoked.')).body);
    expect(revoked.error.message).toBe('The API key has been revoked.');
  });
});
