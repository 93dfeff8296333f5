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
 * of the message as Anthropic names fields (`messages.1.content.0.input: …`). The other fields the translation wrote
 * under chat's names are renamed too (`tools[0].function.parameters` is `tools.0.input_schema`, `stop` is
 * `stop_sequences`); fields of the same name on both sides (`temperature`, `model`) are left as they are.
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

/** A chat tool's fields by the Messages tool's: the function's name, description and strictness are the tool's own. */
const toolFields: Readonly<Record<string, string>> = {
  '.function.parameters': '.input_schema',
  '.function.name': '.name',
  '.function.description': '.description',
  '.function.strict': '.strict',
  '.type': '.type',
};

/** Top-level chat fields the translation wrote from a Messages field of another name (to-chat-request.ts). */
const requestFields: ReadonlyArray<readonly [chat: string, messages: string]> = [
  ['max_completion_tokens', 'max_tokens'],
  ['stop', 'stop_sequences'],
  ['user', 'metadata.user_id'],
  ['parallel_tool_calls', 'tool_choice.disable_parallel_tool_use'],
  ['response_format.json_schema.schema', 'output_config.format.schema'],
  ['response_format.type', 'output_config.format.type'],
  ['response_format', 'output_config.format'],
  ['tool_choice.function.name', 'tool_choice.name'],
  ['tool_choice.function', 'tool_choice.name'],
  // The gateway asks for usage in every stream: the client's field behind it is `stream`.
  ['stream_options', 'stream'],
];

/** `[2]` -> `.2`: Anthropic's dotted paths, for what follows a renamed field (a path inside a tool's schema). */
const dotted = (rest: string) => rest.replace(/\[(\d+)\]/g, '.$1');

/** A `tools[…]` path by the client's tool: `tools[0].function.parameters` is `tools.0.input_schema`. */
function toolParam(chatParam: string): string | undefined {
  const match = /^tools\[(\d+)\](.*)$/.exec(chatParam);
  if (!match) return undefined;
  const tool = `tools.${match[1]}`;
  const rest = match[2] ?? '';
  for (const [chatField, field] of Object.entries(toolFields)) {
    if (rest === chatField || rest.startsWith(`${chatField}.`) || rest.startsWith(`${chatField}[`)) {
      return `${tool}${field}${dotted(rest.slice(chatField.length))}`;
    }
  }
  // `.function` itself, or a field the tool has no name for: the tool as a whole.
  return tool;
}

/** A top-level chat path by the client's field, when the translation renamed it; undefined when it kept its name. */
function requestParam(chatParam: string): string | undefined {
  for (const [chatField, field] of requestFields) {
    if (chatParam === chatField || chatParam.startsWith(`${chatField}.`) || chatParam.startsWith(`${chatField}[`)) {
      // Only the schema's inner path survives: a format's other chat fields (json_schema.name, strict) are the
      // gateway's own, so they name the client's format.
      const rest = chatParam.slice(chatField.length);
      return chatField === 'response_format' || chatField === 'stream_options' || chatField === 'tool_choice.function'
        ? field
        : `${field}${dotted(rest)}`;
    }
  }
  return undefined;
}

/** The Messages field a chat path stands for, or undefined when the client's field has the chat one's name. */
export function messagesParam(chatParam: string, origins: readonly ChatMessageOrigin[]): string | undefined {
  const path = parseChatMessagePath(chatParam);
  if (!path) return toolParam(chatParam) ?? requestParam(chatParam);
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

/**
 * The chat path renamed in the text of the message. A path with an index cannot be an ordinary word and is renamed
 * wherever it stands; a plain name (`stop`, `user`) only where it is quoted as a field (`'stop'`,
 * `'response_format.json_schema.schema'`), so that "role 'user'" or "stop" in prose stay as they are.
 */
function renamedIn(
  text: string,
  chatParam: string,
  param: string,
  rename: (chatPath: string) => string | undefined,
): string {
  if (chatParam.includes('[')) return text.replaceAll(chatParam, param);
  return text.replace(/'([^'\s]+)'/g, (quoted, path: string) =>
    path === chatParam || path.startsWith(`${chatParam}.`) || path.startsWith(`${chatParam}[`)
      ? `'${rename(path) ?? param}'`
      : quoted,
  );
}

/** "Invalid 'messages[1].content': …" loses its chat-worded prefix: the client's path leads the message instead. */
function problemOf(
  error: ApiError,
  chatParam: string,
  param: string,
  rename: (chatPath: string) => string | undefined,
): string {
  const text = error.message;
  for (const prefix of [`Invalid '${chatParam}': `, `${chatParam}: `]) {
    if (text.startsWith(prefix)) return renamedIn(text.slice(prefix.length), chatParam, param, rename);
  }
  return renamedIn(text, chatParam, param, rename);
}

/** The error with its chat path renamed to the client's field, which leads the message; others as they are. */
export function inMessagesTerms(error: unknown, origins: readonly ChatMessageOrigin[]): unknown {
  const rename = (chatParam: string) => messagesParam(chatParam, origins);
  return withClientParam(
    error,
    rename,
    (renamed, param) => `${param}: ${problemOf(renamed, renamed.param as string, param, rename)}`,
  );
}

/** Parameters a deployment dropped from the chat request (named in a response header), by the client's names. */
export function droppedInMessagesTerms(dropped: readonly string[], origins: readonly ChatMessageOrigin[]): string[] {
  return dropped.map((name) => messagesParam(name, origins) ?? name);
}
