import { parseChatMessagePath, parseToolCallPath, withClientParam } from '../../../openai/chat-param.js';
import type { MessageOrigin } from './convert-items.js';

/**
 * Errors about the translated chat request, named as the client wrote its Responses request: the chat path
 * `messages[2].tool_calls[0].function.arguments` is the client's `input[3].arguments`. Only `messages[…]` paths are
 * renamed: every other field has the same name on both sides, or is named by the translation itself.
 */

/** A function call's chat fields by their Responses names. */
const functionCallFields: Readonly<Record<string, string>> = {
  '.function.arguments': '.arguments',
  '.function.name': '.name',
  '.id': '.call_id',
  '.type': '.type',
};

/** The Responses field a chat `messages[…]` path stands for, or undefined when the path is not one. */
export function responsesParam(chatParam: string, origins: readonly MessageOrigin[]): string | undefined {
  const path = parseChatMessagePath(chatParam);
  if (!path) return undefined;
  const origin = origins[path.index];
  if (!origin) return undefined;
  // A string input or the instructions: the whole text is the field.
  if (!origin.param.includes('[')) return origin.param;
  const call = parseToolCallPath(path.rest);
  if (call) {
    const callParam = origin.calls[call.index];
    if (!callParam) return origin.param;
    return `${callParam}${functionCallFields[call.field] ?? ''}`;
  }
  if (path.rest.startsWith('.content')) {
    return `${origin.param}.${origin.contentField}${path.rest.slice('.content'.length)}`;
  }
  return origin.param;
}

/** The error with its chat path renamed to the client's field (in `param` and in the message); others as they are. */
export function inResponsesTerms(error: unknown, origins: readonly MessageOrigin[]): unknown {
  return withClientParam(
    error,
    (chatParam) => responsesParam(chatParam, origins),
    (renamed, param) => renamed.message.replaceAll(renamed.param as string, param),
  );
}
