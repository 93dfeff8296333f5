import { parseChatMessagePath, parseToolCallPath, withClientParam } from '../../../openai/chat-param.js';
import type { MessageOrigin } from './convert-items.js';

/**
 * Errors about the translated chat request, named as the client wrote its Responses request: the chat path
 * `messages[2].tool_calls[0].function.arguments` is the client's `input[3].arguments`, and `reasoning_effort` its
 * `reasoning.effort`. Other fields have the same name on both sides, or are named by the translation itself.
 */

/** A function call's chat fields by their Responses names. */
const functionCallFields: Readonly<Record<string, string>> = {
  '.function.arguments': '.arguments',
  '.function.name': '.name',
  '.id': '.call_id',
  '.type': '.type',
};

/** Top-level chat fields the translation wrote from a Responses field of another name (to-chat-request.ts). */
const requestFields: Readonly<Record<string, string>> = {
  reasoning_effort: 'reasoning.effort',
  max_completion_tokens: 'max_output_tokens',
  response_format: 'text.format',
  verbosity: 'text.verbosity',
};

/**
 * What the chat side left out (`reasoning_effort`, or a replaced value `reasoning_effort=xhigh`), named as the
 * client's Responses field.
 */
export function droppedInResponsesTerms(dropped: readonly string[]): string[] {
  return dropped.map((entry) => {
    const [name = entry, value] = entry.split('=', 2);
    const renamed = requestFields[name];
    if (renamed === undefined) return entry;
    return value === undefined ? renamed : `${renamed}=${value}`;
  });
}

/** The Responses field a chat `messages[…]` path stands for, or undefined when the path is not one. */
export function responsesParam(chatParam: string, origins: readonly MessageOrigin[]): string | undefined {
  const renamed = requestFields[chatParam];
  if (renamed !== undefined) return renamed;
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
