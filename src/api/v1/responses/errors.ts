import { ApiError, invalidRequest } from '../../../server/errors.js';

/** The errors only `/v1/responses` raises, in one place so their codes can move into a shared table at once. */

export function backgroundUnsupported(): ApiError {
  return invalidRequest(
    "Background mode is not supported by this gateway: send the request without 'background' (or with false) and wait for the answer, or stream it.",
    'background',
    'unsupported_parameter',
  );
}

export function unsupportedParameter(param: string, why: string): ApiError {
  return invalidRequest(`Unsupported parameter: '${param}' ${why}`, param, 'unsupported_parameter');
}

/** Something in the request the chat-completions form of the call cannot carry: refused, never silently dropped. */
export function untranslatable(param: string, what: string): ApiError {
  return invalidRequest(
    `Invalid '${param}': ${what} cannot be sent to this model (it is served through chat completions).`,
    param,
    'unsupported_value',
  );
}

/** Another account's response, a deleted or expired one and one never stored all look the same. */
export function previousResponseNotFound(id: string): ApiError {
  return new ApiError({
    status: 404,
    type: 'invalid_request_error',
    code: 'previous_response_not_found',
    param: 'previous_response_id',
    message: `Previous response with id '${id.slice(0, 128)}' not found.`,
  });
}

export function responseNotFound(id: string): ApiError {
  return new ApiError({
    status: 404,
    type: 'invalid_request_error',
    code: 'response_not_found',
    param: 'response_id',
    message: `No response found with id '${id.slice(0, 128)}'.`,
  });
}

export function itemNotFound(id: string, param: string): ApiError {
  return new ApiError({
    status: 404,
    type: 'invalid_request_error',
    code: 'item_not_found',
    param,
    message: `Item with id '${id.slice(0, 128)}' not found.`,
  });
}

export function unknownCallId(callId: string, param: string): ApiError {
  return invalidRequest(
    `No tool call found for function call output with call_id ${callId.slice(0, 128)}: a function_call_output must answer a function_call of the input or of the previous response.`,
    param,
    'invalid_value',
  );
}

export function storedResponseTooLarge(bytes: number, limitBytes: number): ApiError {
  return invalidRequest(
    `This response would take ${bytes} bytes to store, more than the limit of ${limitBytes} bytes (responses.max_stored_bytes). Send it with "store": false (and the whole conversation as input), or send less.`,
    'store',
    'stored_response_too_large',
  );
}
