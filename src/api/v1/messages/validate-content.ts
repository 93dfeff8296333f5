import {
  checkLiteral,
  isObject,
  type JsonObject,
  optionalBoolean,
  optionalString,
  present,
  requireArray,
  requireObject,
  requireString,
  wrongType,
} from './field-checks.js';
import { requestError } from './request-error.js';

/**
 * The `messages` and `system` of a Messages request: every block of a known type has the fields Anthropic requires,
 * in a turn whose role may hold it. Blocks of other types (server-tool blocks, anything newer) are kept unchecked:
 * an Anthropic upstream receives them as they came, and a translated request refuses them by name.
 */

const roles = ['user', 'assistant', 'system'] as const;

/** Block types only the model writes: they belong in assistant turns. */
const assistantOnly = new Set(['tool_use', 'thinking', 'redacted_thinking', 'server_tool_use']);

/** A media block's source: the fields of each known kind (other kinds are Anthropic's to judge). */
function checkSource(block: JsonObject, path: string): void {
  const source = requireObject(block.source, `${path}.source`);
  switch (requireString(source.type, `${path}.source.type`)) {
    case 'base64':
      requireString(source.media_type, `${path}.source.media_type`);
      requireString(source.data, `${path}.source.data`);
      return;
    case 'url':
      requireString(source.url, `${path}.source.url`);
      return;
    case 'file':
      requireString(source.file_id, `${path}.source.file_id`);
      return;
    case 'text':
      requireString(source.data, `${path}.source.data`);
      return;
    case 'content':
      if (typeof source.content !== 'string') checkBlocks(source.content, `${path}.source.content`, 'nested');
      return;
  }
}

function checkTextBlocks(value: unknown, path: string): void {
  requireArray(value, path).forEach((item, index) => {
    const block = requireObject(item, `${path}.${index}`);
    checkLiteral(block.type, `${path}.${index}.type`, ['text']);
    requireString(block.text, `${path}.${index}.text`);
  });
}

function checkBlock(item: unknown, path: string, role: string): void {
  const block = requireObject(item, path);
  if (typeof block.type !== 'string') {
    throw requestError(path, "Unable to extract tag using discriminator 'type'", 'invalid_type');
  }
  if (assistantOnly.has(block.type) && role === 'user') {
    throw requestError(`${path}.type`, `${block.type} blocks can only be in assistant messages`);
  }
  if (block.type === 'tool_result' && role === 'assistant') {
    throw requestError(`${path}.type`, 'tool_result blocks can only be in user messages');
  }
  switch (block.type) {
    case 'text':
      requireString(block.text, `${path}.text`);
      return;
    case 'image':
      checkSource(block, path);
      return;
    case 'document':
      checkSource(block, path);
      optionalString(block.title, `${path}.title`);
      return;
    case 'search_result':
      requireString(block.source, `${path}.source`);
      requireString(block.title, `${path}.title`);
      checkTextBlocks(block.content, `${path}.content`);
      return;
    case 'tool_use':
      requireString(block.id, `${path}.id`);
      requireString(block.name, `${path}.name`);
      requireObject(block.input, `${path}.input`);
      return;
    case 'tool_result':
      requireString(block.tool_use_id, `${path}.tool_use_id`);
      if (present(block.content) && typeof block.content !== 'string') {
        checkBlocks(block.content, `${path}.content`, 'nested');
      }
      optionalBoolean(block.is_error, `${path}.is_error`);
      return;
    case 'thinking':
      requireString(block.thinking, `${path}.thinking`);
      requireString(block.signature, `${path}.signature`);
      return;
    case 'redacted_thinking':
      requireString(block.data, `${path}.data`);
      return;
  }
}

/** `nested`: blocks inside a tool result or a document, where no role applies. */
function checkBlocks(value: unknown, path: string, role: string): void {
  requireArray(value, path).forEach((item, index) => {
    checkBlock(item, `${path}.${index}`, role);
  });
}

export function checkMessages(value: unknown): void {
  const messages = requireArray(value, 'messages');
  if (messages.length === 0) {
    throw requestError('messages', 'List should have at least 1 item after validation, not 0', 'invalid_value');
  }
  // The tool_use ids of the latest assistant turn: a tool result answers one of them or none (Anthropic's rule, so a
  // translated request is refused in Anthropic's words, not in the words of the chat request it would have become).
  let calls = new Set<string>();
  messages.forEach((item, index) => {
    const path = `messages.${index}`;
    const message = requireObject(item, path);
    checkLiteral(message.role, `${path}.role`, roles);
    const content = message.content;
    if (content === undefined) requireString(content, `${path}.content`);
    if (typeof content !== 'string') {
      if (!Array.isArray(content)) wrongType(`${path}.content`, 'a valid string or a valid list');
      checkBlocks(content, `${path}.content`, message.role as string);
    }
    // Anthropic's own rules, checked here so that a translated request is refused in Anthropic's words too, not in
    // those of the provider it went to (Gemini: "contents is not specified").
    const final = index === messages.length - 1 && message.role === 'assistant';
    if (content.length === 0 && !final) {
      throw requestError(
        path,
        'all messages must have non-empty content except for the optional final assistant message',
      );
    }
    if (
      Array.isArray(content) &&
      content.some((block) => isObject(block) && block.type === 'text' && block.text === '')
    ) {
      throw requestError(path, 'text content blocks must be non-empty');
    }
    const blocks = Array.isArray(content) ? (content as JsonObject[]) : [];
    if (message.role === 'assistant') {
      calls = new Set(blocks.filter((block) => block.type === 'tool_use').map((block) => String(block.id)));
    }
    for (const block of blocks) {
      if (block.type !== 'tool_result' || calls.has(String(block.tool_use_id))) continue;
      throw requestError(
        `${path}.content`,
        `unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${String(block.tool_use_id).slice(0, 64)}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`,
      );
    }
  });
}

export function checkSystem(value: unknown): void {
  if (!present(value) || typeof value === 'string') return;
  if (!Array.isArray(value)) wrongType('system', 'a valid string or a valid list');
  checkTextBlocks(value, 'system');
}
