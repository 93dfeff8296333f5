import { describe, expect, it } from 'vitest';
import { apiError, toApiError, upstreamRejectedRequest } from '../../src/errors/api-error.js';
import { type ErrorCode, errorCodes } from '../../src/errors/error-codes.js';
import { anthropicStreamError } from '../../src/errors/render-anthropic.js';
import { openAiStreamError, renderOpenAiError } from '../../src/errors/render-openai.js';

const codes = Object.keys(errorCodes) as ErrorCode[];

describe('the error-code table', () => {
  it('renders every code with its status and type, in OpenAI shape', () => {
    for (const code of codes) {
      const rendered = renderOpenAiError(apiError(code, `message of ${code}`, { param: 'model' }), 'req_1');
      const entry: { status: number; type: string; wireCode?: string | null } = errorCodes[code];
      expect(rendered.status, code).toBe(entry.status);
      expect(rendered.headers['x-request-id']).toBe('req_1');
      expect(JSON.parse(rendered.body), code).toEqual({
        error: {
          message: `message of ${code}`,
          type: entry.type,
          param: 'model',
          code: entry.wireCode === undefined ? code : entry.wireCode,
        },
      });
    }
  });

  it('passes an upstream refusal on with its own status, type and code', () => {
    const error = upstreamRejectedRequest({ status: 422, type: 'invalid_request_error', code: 'bad_thing' }, 'no');
    expect(JSON.parse(renderOpenAiError(error).body).error).toMatchObject({ code: 'bad_thing' });
    expect(renderOpenAiError(error).status).toBe(422);
    expect(upstreamRejectedRequest({ status: 400 }, 'no').code).toBeNull();
  });

  it('turns anything unexpected into an opaque 500 that keeps its cause', () => {
    const cause = new Error('secret detail');
    const error = toApiError(cause);
    expect(error.status).toBe(500);
    expect(error.message).not.toContain('secret');
    expect(error.cause).toBe(cause);
  });

  it('frames errors inside started streams for each surface', () => {
    expect(openAiStreamError(apiError('upstream_error', 'gone'))).toMatch(/^data: \{"error":\{.*\}\}\n\n$/);
    expect(anthropicStreamError(apiError('upstream_overloaded', 'busy'))).toBe(
      'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"busy"}}\n\n',
    );
  });
});
