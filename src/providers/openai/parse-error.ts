import type { ApiError } from '../../errors/api-error.js';
import { mapUpstreamError, readRetryAfter } from '../upstream-error.js';

type Headers = Record<string, string | string[] | undefined>;

const asString = (value: unknown): string | undefined =>
  typeof value === 'string' ? value : typeof value === 'number' ? String(value) : undefined;

/**
 * Reads the error bodies OpenAI-compatible servers actually send: OpenAI's `{"error":{message,type,code,param}}`,
 * Ollama's `{"error":"text"}`, FastAPI's `{"detail":…}`, `{"message":…}`, or plain text.
 */
export function parseOpenAiError(providerName: string, status: number, headers: Headers, text: string): ApiError {
  let message: string | undefined;
  let type: string | undefined;
  let code: string | undefined;
  let param: string | undefined;
  try {
    const body = JSON.parse(text) as Record<string, unknown>;
    const error = body.error;
    if (error && typeof error === 'object') {
      const fields = error as Record<string, unknown>;
      message = asString(fields.message);
      type = asString(fields.type);
      code = asString(fields.code);
      param = asString(fields.param);
    } else if (typeof error === 'string') {
      message = error;
    } else if (body.detail !== undefined) {
      message = typeof body.detail === 'string' ? body.detail : JSON.stringify(body.detail);
    } else {
      message = asString(body.message);
    }
  } catch {
    const trimmed = text.trim();
    message = trimmed ? `non-JSON error body: ${trimmed.slice(0, 200)}` : undefined;
  }
  return mapUpstreamError(providerName, {
    status,
    message,
    type,
    code,
    param,
    retryAfterSeconds: readRetryAfter(headers),
  });
}

/** An `{"error":…}` object inside a 200 response or a stream: an error, never passed off as success. */
export function errorInsideSuccess(providerName: string, body: Record<string, unknown>): ApiError {
  const status =
    typeof (body.error as { code?: unknown })?.code === 'number' ? Number((body.error as { code: number }).code) : 502;
  return parseOpenAiError(providerName, status >= 400 ? status : 502, {}, JSON.stringify(body));
}
