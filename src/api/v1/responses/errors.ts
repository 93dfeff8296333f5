import { type ApiError, apiError } from '../../../errors/api-error.js';

/** The errors only `/v1/responses` raises, in one place so their codes can move into a shared table at once. */

export function backgroundUnsupported(): ApiError {
  return apiError(
    'unsupported_parameter',
    "Background mode is not supported by this gateway: send the request without 'background' (or with false) and wait for the answer, or stream it.",
    { param: 'background' },
  );
}

export function unsupportedParameter(param: string, why: string): ApiError {
  return apiError('unsupported_parameter', `Unsupported parameter: '${param}' ${why}`, { param });
}

/** Something in the request the chat-completions form of the call cannot carry: refused, never silently dropped. */
export function untranslatable(param: string, what: string): ApiError {
  return apiError(
    'unsupported_value',
    `Invalid '${param}': ${what} cannot be sent to this model (it is served through chat completions).`,
    { param },
  );
}

/** Another account's response, a deleted or expired one and one never stored all look the same. */
export function previousResponseNotFound(id: string): ApiError {
  return apiError('previous_response_not_found', `Previous response with id '${id.slice(0, 128)}' not found.`, {
    param: 'previous_response_id',
  });
}

export function responseNotFound(id: string): ApiError {
  return apiError('response_not_found', `No response found with id '${id.slice(0, 128)}'.`, { param: 'response_id' });
}

export function itemNotFound(id: string, param: string): ApiError {
  return apiError('item_not_found', `Item with id '${id.slice(0, 128)}' not found.`, { param });
}

export function unknownCallId(callId: string, param: string): ApiError {
  return apiError(
    'invalid_value',
    `No tool call found for function call output with call_id ${callId.slice(0, 128)}: a function_call_output must answer a function_call of the input or of the previous response.`,
    { param },
  );
}

export function conversationTooLarge(bytes: number, limitBytes: number, param: string): ApiError {
  return apiError(
    'conversation_too_large',
    `This conversation is longer than this gateway replays: over ${bytes} bytes of stored items, against a limit of ${limitBytes} bytes (responses.max_conversation_bytes) and 100,000 responses. Begin a new conversation, or send the part that matters as input with "store": false.`,
    { param },
  );
}

export function storedResponseTooLarge(bytes: number, limitBytes: number): ApiError {
  return apiError(
    'stored_response_too_large',
    `This response would take ${bytes} bytes to store, more than the limit of ${limitBytes} bytes (responses.max_stored_bytes). Send it with "store": false (and the whole conversation as input), or send less.`,
    { param: 'store' },
  );
}

/** An item reference to an item of a response answered with `"store": false` because it grew too large to store. */
export function itemNotStored(
  id: string,
  param: string,
  responseId: string,
  bytes: number,
  limitBytes: number,
): ApiError {
  return apiError(
    'item_not_found',
    `Item with id '${id.slice(0, 128)}' not found: it is an item of response '${responseId.slice(0, 128)}', which was answered but not stored, since it grew to ${bytes} bytes while it was generated, more than the limit of ${limitBytes} bytes (responses.max_stored_bytes), and its answer said "store": false. Send the item itself instead of a reference to it.`,
    { param },
  );
}

/** A response answered with `"store": false` because it grew too large to store, looked up by id: not found, and why. */
export function responseNotStored(id: string, bytes: number, limitBytes: number): ApiError {
  return apiError(
    'response_not_found',
    `No response found with id '${id.slice(0, 128)}': it was answered but not stored, since it grew to ${bytes} bytes while it was generated, more than the limit of ${limitBytes} bytes (responses.max_stored_bytes), and its answer said "store": false.`,
    { param: 'response_id' },
  );
}

/** A continuation of a response the gateway answered with `"store": false` because it grew too large to store. */
export function previousResponseNotStored(id: string, bytes: number, limitBytes: number): ApiError {
  return apiError(
    'stored_response_too_large',
    `Previous response with id '${id.slice(0, 128)}' was answered but not stored: it grew to ${bytes} bytes while it was generated, more than the limit of ${limitBytes} bytes (responses.max_stored_bytes), and its answer said "store": false. Send the conversation as input instead of previous_response_id.`,
    { param: 'previous_response_id' },
  );
}

/**
 * A stored response still streaming on another node, named by `param` (`previous_response_id`, or `response_id` for its
 * input items): there is nothing to continue or list until its stream ends.
 */
export function responseInProgress(id: string, param: string): ApiError {
  return apiError(
    'response_in_progress',
    `Response with id '${id.slice(0, 128)}' is still in progress: its stream has not ended. Wait for its response.completed (or other final) event before using it.`,
    { param },
  );
}

/** An item reference to an item of a stored response still streaming on another node (its item is not stored yet). */
export function itemOfResponseInProgress(id: string, param: string, responseId: string): ApiError {
  return apiError(
    'response_in_progress',
    `Item with id '${id.slice(0, 128)}' is an item of response '${responseId.slice(0, 128)}', which is still in progress: its stream has not ended. Wait for its response.completed (or other final) event before referring to its items.`,
    { param },
  );
}

const stoppedWhy =
  'the gateway node serving it stopped before its stream ended (it was shut down or failed), and nothing of it was stored but how it began';

/** A response whose stream's node stopped before the stream ended, continued: there is nothing stored to replay. */
export function previousResponseStopped(id: string): ApiError {
  return apiError(
    'previous_response_not_found',
    `Previous response with id '${id.slice(0, 128)}' not found: it failed, since ${stoppedWhy}. Send the conversation as input instead of previous_response_id.`,
    { param: 'previous_response_id' },
  );
}

/** The input items of a response whose stream's node stopped before the stream ended: they were never stored. */
export function responseStopped(id: string): ApiError {
  return apiError(
    'response_not_found',
    `No input items found for response '${id.slice(0, 128)}': it failed, since ${stoppedWhy}.`,
    { param: 'response_id' },
  );
}

/** An item reference to an item of a response whose stream's node stopped before the stream ended. */
export function itemOfStoppedResponse(id: string, param: string, responseId: string): ApiError {
  return apiError(
    'item_not_found',
    `Item with id '${id.slice(0, 128)}' not found: it is an item of response '${responseId.slice(0, 128)}', which failed, since ${stoppedWhy}. Send the item itself instead of a reference to it.`,
    { param },
  );
}
