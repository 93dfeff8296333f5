import type { ChatMessage, ToolCall } from '../../../openai/types.js';
import type {
  CountTokensRequest,
  MessageBlock,
  TextBlock,
  ThinkingBlock,
  ToolResultBlock,
  ToolUseBlock,
} from '../../../providers/anthropic/wire-types.js';
import { type ChatContentPart, userParts } from './to-chat-content.js';
import { type TranslationTarget, untranslatable } from './translation-target.js';

/**
 * `system` + `messages` of a Messages request -> OpenAI chat messages:
 * - `system` (a string or text blocks, joined by blank lines) -> one system message first;
 * - consecutive turns of one role are one turn, as Anthropic combines them;
 * - a user turn's `tool_result` blocks -> `tool` messages, in their order, before anything else of the turn (chat
 *   wants them right after the assistant's tool calls); what they carry besides text (images, PDFs) cannot be in a
 *   tool message and follows in the user message after them; `is_error` prefixes the text with "Error: ";
 * - an assistant turn: text -> `content`, `tool_use` -> `tool_calls` (input serialized as the arguments string),
 *   `thinking` -> `reasoning_content` (the field the gateway's adapters use; the signature has no chat field and is
 *   left out), `redacted_thinking` (encrypted for Anthropic models only) left out;
 * - a `system` turn (the newest SDKs allow one mid-conversation) -> a system message where it stands.
 * Every block appears once; nothing is duplicated or reordered within its kind.
 */

/** Where a chat message came from in the Messages request: what its errors are about, in the client's terms. */
export interface ChatMessageOrigin {
  /** The client's message (the first of a turn) or `system`. */
  param: string;
  /** The field that became the chat `content` when it is one (a tool result's `content`, a lone text block). */
  content?: string;
  /** Per chat content part, the block it was made from. */
  parts: string[];
  /** Per chat tool call, its `tool_use` block. */
  calls: string[];
}

export interface ChatMessages {
  messages: ChatMessage[];
  /** Per message, where it came from. */
  origins: ChatMessageOrigin[];
}

interface PlacedBlock {
  block: MessageBlock;
  path: string;
}

interface Turn {
  role: 'user' | 'assistant' | 'system';
  /** The turn's first message. */
  path: string;
  blocks: PlacedBlock[];
}

/** Chat messages with their origins, built side by side. */
type Placed = { message: ChatMessage; origin: ChatMessageOrigin };

function turnsOf(messages: CountTokensRequest['messages']): Turn[] {
  const turns: Turn[] = [];
  messages.forEach((message, index) => {
    const path = `messages.${index}.content`;
    const blocks: PlacedBlock[] =
      typeof message.content === 'string'
        ? [{ block: { type: 'text', text: message.content }, path }]
        : message.content.map((block, blockIndex) => ({ block, path: `${path}.${blockIndex}` }));
    const last = turns.at(-1);
    if (last?.role === message.role) last.blocks.push(...blocks);
    else turns.push({ role: message.role, path: `messages.${index}`, blocks });
  });
  return turns;
}

function systemText(system: CountTokensRequest['system']): string {
  if (typeof system === 'string') return system;
  if (!Array.isArray(system)) return '';
  return system
    .map((block) => block.text)
    .filter((value) => value !== '')
    .join('\n\n');
}

/** One text part is sent as a plain string, the form every chat server takes. */
function userContent(parts: ChatContentPart[]): string | ChatContentPart[] {
  const only = parts[0];
  return parts.length === 1 && only?.type === 'text' ? only.text : parts;
}

function toolMessage(
  result: ToolResultBlock,
  path: string,
  target: TranslationTarget,
  attachments: PlacedPart[],
): Placed {
  const texts: string[] = [];
  if (typeof result.content === 'string') {
    texts.push(result.content);
  } else {
    (result.content ?? []).forEach((block, index) => {
      const blockPath = `${path}.content.${index}`;
      for (const part of userParts(block, blockPath, target)) {
        if (part.type === 'text') texts.push(part.text);
        else attachments.push({ part, path: blockPath });
      }
    });
  }
  let content = texts.join('\n');
  if (content === '' && attachments.length > 0) content = 'The result is attached in the next message.';
  if (result.is_error === true) content = `Error: ${content}`;
  return {
    message: { role: 'tool', tool_call_id: result.tool_use_id, content },
    origin: { param: path, content: `${path}.content`, parts: [], calls: [] },
  };
}

interface PlacedPart {
  part: ChatContentPart;
  path: string;
}

function userMessages(turn: Turn, target: TranslationTarget): Placed[] {
  const toolMessages: Placed[] = [];
  const parts: PlacedPart[] = [];
  const attachments: PlacedPart[] = [];
  for (const { block, path } of turn.blocks) {
    if (block.type === 'tool_result')
      toolMessages.push(toolMessage(block as ToolResultBlock, path, target, attachments));
  }
  for (const { block, path } of turn.blocks) {
    if (block.type !== 'tool_result') parts.push(...userParts(block, path, target).map((part) => ({ part, path })));
  }
  const content = [...attachments, ...parts];
  if (content.length === 0 && toolMessages.length > 0) return toolMessages;
  const paths = content.map(({ path }) => path);
  const origin: ChatMessageOrigin = { param: turn.path, parts: paths, calls: [] };
  if (paths.length === 1) origin.content = paths[0];
  const message: ChatMessage = {
    role: 'user',
    content: content.length === 0 ? '' : userContent(content.map(({ part }) => part)),
  };
  return [...toolMessages, { message, origin }];
}

function assistantMessage(turn: Turn, target: TranslationTarget): Placed {
  const texts: string[] = [];
  const textPaths: string[] = [];
  const reasoning: string[] = [];
  const toolCalls: ToolCall[] = [];
  const calls: string[] = [];
  for (const { block, path } of turn.blocks) {
    switch (block.type) {
      case 'text':
        if ((block as TextBlock).text !== '') {
          texts.push((block as TextBlock).text);
          textPaths.push(path);
        }
        break;
      case 'thinking':
        reasoning.push((block as ThinkingBlock).thinking);
        break;
      case 'redacted_thinking':
        break;
      case 'tool_use': {
        const use = block as ToolUseBlock;
        toolCalls.push({
          id: use.id,
          type: 'function',
          function: { name: use.name, arguments: JSON.stringify(use.input) },
        });
        calls.push(path);
        break;
      }
      default:
        untranslatable(`${path}.type`, `a content block of type '${block.type}'`, target);
    }
  }
  const message: ChatMessage = {
    role: 'assistant',
    content: texts.length > 0 ? texts.join('\n\n') : toolCalls.length > 0 ? null : '',
  };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  if (reasoning.length > 0) message.reasoning_content = reasoning.join('\n\n');
  const origin: ChatMessageOrigin = { param: turn.path, parts: [], calls };
  if (textPaths.length === 1) origin.content = textPaths[0];
  return { message, origin };
}

function systemMessage(turn: Turn, target: TranslationTarget): Placed {
  const texts = turn.blocks.map(({ block, path }) =>
    block.type === 'text'
      ? (block as TextBlock).text
      : untranslatable(`${path}.type`, `a system-turn block of type '${block.type}'`, target),
  );
  return {
    message: { role: 'system', content: texts.join('\n\n') },
    origin: { param: turn.path, parts: [], calls: [] },
  };
}

export function toChatMessages(request: CountTokensRequest, target: TranslationTarget): ChatMessages {
  const placed: Placed[] = [];
  const system = systemText(request.system);
  if (system !== '') {
    placed.push({ message: { role: 'system', content: system }, origin: { param: 'system', parts: [], calls: [] } });
  }
  for (const turn of turnsOf(request.messages)) {
    if (turn.role === 'user') placed.push(...userMessages(turn, target));
    else if (turn.role === 'assistant') placed.push(assistantMessage(turn, target));
    else placed.push(systemMessage(turn, target));
  }
  return { messages: placed.map(({ message }) => message), origins: placed.map(({ origin }) => origin) };
}
