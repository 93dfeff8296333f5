import { ApiError } from '../errors/api-error.js';

/**
 * Errors about a chat request the gateway translated from the client's own (a Responses or Messages request), named
 * as the client wrote it. A provider adapter (or an upstream) refusing `messages[2].tool_calls[0].function.arguments`
 * speaks of a request the client never sent. Each surface says where its chat messages came from; this module reads
 * the chat path and rebuilds the error.
 */

/** A `messages[…]` path of the chat request, split into the message and what follows inside it. */
export interface ChatMessagePath {
  index: number;
  /** `.tool_calls[0].function.arguments`, `.content[1].image_url.url`, `.content`, or empty. */
  rest: string;
}

/** One tool call inside a message's path: its index and its own field (`.function.arguments`, `.id`…). */
export interface ChatToolCallPath {
  index: number;
  field: string;
}

/** One content part inside a message's path: its index (undefined for `.content` itself) and what follows. */
export interface ChatContentPath {
  index: number | undefined;
  field: string;
}

const chatMessagePath = /^messages\[(\d+)\](.*)$/;
const toolCallPath = /^\.tool_calls\[(\d+)\](.*)$/;
const contentPath = /^\.content(?:\[(\d+)\])?(.*)$/;

export function parseChatMessagePath(param: string): ChatMessagePath | undefined {
  const match = chatMessagePath.exec(param);
  return match ? { index: Number(match[1]), rest: match[2] ?? '' } : undefined;
}

export function parseToolCallPath(rest: string): ChatToolCallPath | undefined {
  const match = toolCallPath.exec(rest);
  return match ? { index: Number(match[1]), field: match[2] ?? '' } : undefined;
}

export function parseContentPath(rest: string): ChatContentPath | undefined {
  const match = contentPath.exec(rest);
  if (!match) return undefined;
  return { index: match[1] === undefined ? undefined : Number(match[1]), field: match[2] ?? '' };
}

/**
 * The error with its chat `param` renamed by `rename` (undefined: left as it is), `message` rewording it for the
 * client's surface. Errors that are not the gateway's ApiError, or name no field, are returned as they are.
 */
export function withClientParam(
  error: unknown,
  rename: (chatParam: string) => string | undefined,
  message: (error: ApiError, clientParam: string) => string,
): unknown {
  if (!(error instanceof ApiError) || error.param === null) return error;
  const param = rename(error.param);
  if (param === undefined) return error;
  return new ApiError(
    error.errorCode,
    message(error, param),
    { param, headers: error.headers, cause: error.cause },
    { status: error.status, type: error.type, code: error.code },
  );
}
