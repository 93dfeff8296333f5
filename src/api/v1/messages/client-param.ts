import type { ApiError } from '../../../errors/api-error.js';
import {
  parseChatMessagePath,
  parseContentPath,
  parseToolCallPath,
  withClientParam,
} from '../../../openai/chat-param.js';
import type { ChatMessageOrigin } from './to-chat-messages.js';

/**
 * Errors about the translated chat request, named as the client wrote its Messages request: the chat path
 * `messages[2].tool_calls[0].function.arguments` is the client's `messages.1.content.0.input`, and goes at the start
 * of the message as Anthropic names fields (`messages.1.content.0.input: …`). Only `messages[…]` paths are renamed.
 */

/** A tool call's chat fields by their `tool_use` names. */
const toolUseFields: Readonly<Record<string, string>> = {
  '.function.arguments': '.input',
  '.function.name': '.name',
  '.id': '.id',
  '.type': '.type',
};

/** A content part's chat fields by the block's: an image URL or file data is the block's `source`. */
function blockField(field: string): string {
  if (field.startsWith('.image_url') || field.startsWith('.file') || field.startsWith('.input_audio')) {
    return '.source';
  }
  return field === '.type' || field === '.text' ? field : '';
}

/** The Messages field a chat `messages[…]` path stands for, or undefined when the path is not one. */
export function messagesParam(chatParam: string, origins: readonly ChatMessageOrigin[]): string | undefined {
  const path = parseChatMessagePath(chatParam);
  if (!path) return undefined;
  const origin = origins[path.index];
  if (!origin) return undefined;
  if (path.rest === '.tool_call_id') return `${origin.param}.tool_use_id`;
  const call = parseToolCallPath(path.rest);
  if (call) {
    const callParam = origin.calls[call.index];
    return callParam ? `${callParam}${toolUseFields[call.field] ?? ''}` : origin.param;
  }
  const content = parseContentPath(path.rest);
  if (content) {
    if (content.index === undefined) return origin.content ?? origin.param;
    const part = origin.parts[content.index];
    return part ? `${part}${blockField(content.field)}` : (origin.content ?? origin.param);
  }
  return origin.param;
}

/** "Invalid 'messages[1].content': …" loses its chat-worded prefix: the client's path leads the message instead. */
function problemOf(error: ApiError, chatParam: string, param: string): string {
  const text = error.message;
  for (const prefix of [`Invalid '${chatParam}': `, `${chatParam}: `]) {
    if (text.startsWith(prefix)) return text.slice(prefix.length).replaceAll(chatParam, param);
  }
  return text.replaceAll(chatParam, param);
}

/** The error with its chat path renamed to the client's field, which leads the message; others as they are. */
export function inMessagesTerms(error: unknown, origins: readonly ChatMessageOrigin[]): unknown {
  return withClientParam(
    error,
    (chatParam) => messagesParam(chatParam, origins),
    (renamed, param) => `${param}: ${problemOf(renamed, renamed.param as string, param)}`,
  );
}
