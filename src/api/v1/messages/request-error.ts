import { type ApiError, apiError } from '../../../errors/api-error.js';
import type { ErrorCode } from '../../../errors/error-codes.js';

/**
 * A 400 about one field of a Messages request, worded as Anthropic words its own: the field's dotted path, then what
 * is wrong (`messages.2.content.0.source: Field required`). `param` keeps the path for the log; on this surface the
 * client sees `{"type":"error","error":{"type":"invalid_request_error",…}}`.
 */
export function requestError(path: string, problem: string, code: ErrorCode = 'invalid_value'): ApiError {
  return apiError(code, path ? `${path}: ${problem}` : problem, { param: path || null });
}
