import { ApiError } from '../../../errors/api-error.js';
import type { MessageOrigin } from './convert-items.js';

/**
 * Errors about the translated chat request, named as the client wrote its Responses request. A provider adapter (or an
 * upstream) refusing `messages[2].tool_calls[0].function.arguments` speaks of a request the client never sent; the
 * client's field is `input[3].arguments`. Only `messages[…]` paths are renamed: every other field has the same name on
 * both sides, or is named by the translation itself.
 */

const chatMessagePath = /^messages\[(\d+)\](.*)$/;
const toolCallPath = /^\.tool_calls\[(\d+)\](.*)$/;

/** A function call's chat fields by their Responses names. */
const functionCallFields: Readonly<Record<string, string>> = {
  '.function.arguments': '.arguments',
  '.function.name': '.name',
  '.id': '.call_id',
  '.type': '.type',
};

/** The Responses field a chat `messages[…]` path stands for, or undefined when the path is not one. */
export function responsesParam(chatParam: string, origins: readonly MessageOrigin[]): string | undefined {
  const match = chatMessagePath.exec(chatParam);
  if (!match) return undefined;
  const origin = origins[Number(match[1])];
  if (!origin) return undefined;
  // A string input or the instructions: the whole text is the field.
  if (!origin.param.includes('[')) return origin.param;
  const rest = match[2] ?? '';
  const call = toolCallPath.exec(rest);
  if (call) {
    const callParam = origin.calls[Number(call[1])];
    if (!callParam) return origin.param;
    return `${callParam}${functionCallFields[call[2] ?? ''] ?? ''}`;
  }
  if (rest.startsWith('.content')) return `${origin.param}.${origin.contentField}${rest.slice('.content'.length)}`;
  return origin.param;
}

/** The error with its chat path renamed to the client's field (in `param` and in the message); others as they are. */
export function inResponsesTerms(error: unknown, origins: readonly MessageOrigin[]): unknown {
  if (!(error instanceof ApiError) || error.param === null) return error;
  const param = responsesParam(error.param, origins);
  if (param === undefined) return error;
  return new ApiError(
    error.errorCode,
    error.message.replaceAll(error.param, param),
    { param, headers: error.headers, cause: error.cause },
    { status: error.status, type: error.type, code: error.code },
  );
}
