import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  anthropicErrorByStatus,
  anthropicErrorShape,
  renderAnthropicError,
} from '../../src/api/v1/messages/anthropic-error.js';
import { ApiError, modelNotFound, payloadTooLarge, toApiError, unauthorized } from '../../src/server/errors.js';

const error = (status: number, type = 'server_error', code: string | null = null, message = 'm') =>
  new ApiError({ status, type, code, message });

/** Every error status the gateway's sources give an error (`status: 4xx` in an ApiError, `status = 5xx`, a default). */
function statusesInSources(): number[] {
  const found = new Set<number>();
  const walk = (directory: string) => {
    for (const entry of readdirSync(directory, { withFileTypes: true })) {
      const path = join(directory, entry.name);
      // The management API and console users answer in their own shape, never on /v1/messages; the table itself
      // is what is checked.
      if (entry.isDirectory()) {
        if (!path.endsWith(join('api', 'manage')) && !path.endsWith('users')) walk(path);
      } else if (path.endsWith('.ts') && !path.endsWith('anthropic-error.ts')) {
        for (const match of readFileSync(path, 'utf8').matchAll(/\bstatus(?:: | = )([45]\d\d)\b/g)) {
          found.add(Number(match[1]));
        }
      }
    }
  };
  walk(new URL('../../src', import.meta.url).pathname);
  return [...found].sort();
}

describe('errors in Anthropic’s shape', () => {
  it('has a row for every error status the gateway writes', () => {
    const statuses = statusesInSources();
    expect(statuses).toEqual(expect.arrayContaining([400, 401, 403, 404, 413, 429, 499, 502, 503, 504]));
    for (const status of statuses) expect(anthropicErrorByStatus[status], `status ${status}`).toBeDefined();
  });

  it('maps each status to Anthropic’s type and status', () => {
    const shapes = Object.fromEntries(
      [400, 401, 402, 403, 404, 405, 408, 409, 413, 422, 429, 431, 499, 500, 502, 503, 504, 529, 418, 507].map(
        (status) => [status, anthropicErrorShape(error(status))],
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

  it('renders the body, status and headers, keeping retry headers and the request id', () => {
    const overloaded = new ApiError({
      status: 503,
      type: 'server_error',
      code: 'upstream_overloaded',
      message: 'The upstream provider "claude" is overloaded: Overloaded',
      headers: { 'retry-after': '7', 'retry-after-ms': '7000' },
    });
    const rendered = renderAnthropicError(overloaded, 'req_1');
    expect(rendered.status).toBe(529);
    expect(rendered.headers).toEqual({
      'x-request-id': 'req_1',
      'content-type': 'application/json',
      'retry-after': '7',
      'retry-after-ms': '7000',
    });
    expect(JSON.parse(rendered.body)).toEqual({
      type: 'error',
      error: { type: 'overloaded_error', message: 'The upstream provider "claude" is overloaded: Overloaded' },
      request_id: 'req_1',
    });
    const budget = new ApiError({
      status: 429,
      type: 'insufficient_quota',
      code: 'insufficient_quota',
      message: 'You exceeded your current quota.',
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
    const overflow = error(
      400,
      'invalid_request_error',
      'context_length_exceeded',
      "This model's maximum context length is 128000 tokens.",
    );
    expect(JSON.parse(renderAnthropicError(overflow).body).error.message).toBe(
      "prompt is too long: This model's maximum context length is 128000 tokens.",
    );
    const anthropicOverflow = error(
      400,
      'invalid_request_error',
      'context_length_exceeded',
      'prompt is too long: 1 > 0',
    );
    expect(JSON.parse(renderAnthropicError(anthropicOverflow).body).error.message).toBe('prompt is too long: 1 > 0');
    const noKey = JSON.parse(renderAnthropicError(unauthorized('The x-api-key header is not accepted here.')).body);
    expect(noKey.error.type).toBe('authentication_error');
    expect(noKey.error.message).toContain('ANTHROPIC_AUTH_TOKEN');
    const revoked = JSON.parse(
      renderAnthropicError(unauthorized('The API key has been revoked.', 'invalid_api_key')).body,
    );
    expect(revoked.error.message).toBe('The API key has been revoked.');
  });
});
