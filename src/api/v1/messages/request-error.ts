import { ApiError } from '../../../server/errors.js';

/**
 * A 400 about one field of a Messages request, worded as Anthropic words its own: the field's dotted path, then what
 * is wrong (`messages.2.content.0.source: Field required`). `param` keeps the path and `code` the gateway's error
 * code, for the log; on this surface the client sees `{"type":"error","error":{"type":"invalid_request_error",…}}`.
 */
export function requestError(path: string, problem: string, code = 'invalid_value'): ApiError {
  return new ApiError({
    status: 400,
    type: 'invalid_request_error',
    code,
    param: path || null,
    message: path ? `${path}: ${problem}` : problem,
  });
}
