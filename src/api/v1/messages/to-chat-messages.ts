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

interface PlacedBlock {
  block: MessageBlock;
  path: string;
}

interface Turn {
  role: 'user' | 'assistant' | 'system';
  blocks: PlacedBlock[];
}

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
    else turns.push({ role: message.role, blocks });
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
  attachments: ChatContentPart[],
): ChatMessage {
  const texts: string[] = [];
  if (typeof result.content === 'string') {
    texts.push(result.content);
  } else {
    (result.content ?? []).forEach((block, index) => {
      for (const part of userParts(block, `${path}.content.${index}`, target)) {
        if (part.type === 'text') texts.push(part.text);
        else attachments.push(part);
      }
    });
  }
  let content = texts.join('\n');
  if (content === '' && attachments.length > 0) content = 'The result is attached in the next message.';
  if (result.is_error === true) content = `Error: ${content}`;
  return { role: 'tool', tool_call_id: result.tool_use_id, content };
}

function userMessages(turn: Turn, target: TranslationTarget): ChatMessage[] {
  const toolMessages: ChatMessage[] = [];
  const parts: ChatContentPart[] = [];
  const attachments: ChatContentPart[] = [];
  for (const { block, path } of turn.blocks) {
    if (block.type === 'tool_result')
      toolMessages.push(toolMessage(block as ToolResultBlock, path, target, attachments));
  }
  for (const { block, path } of turn.blocks) {
    if (block.type !== 'tool_result') parts.push(...userParts(block, path, target));
  }
  const content = [...attachments, ...parts];
  if (content.length === 0 && toolMessages.length > 0) return toolMessages;
  return [...toolMessages, { role: 'user', content: content.length === 0 ? '' : userContent(content) }];
}

function assistantMessage(turn: Turn, target: TranslationTarget): ChatMessage {
  const texts: string[] = [];
  const reasoning: string[] = [];
  const toolCalls: ToolCall[] = [];
  for (const { block, path } of turn.blocks) {
    switch (block.type) {
      case 'text':
        if ((block as TextBlock).text !== '') texts.push((block as TextBlock).text);
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
  return message;
}

function systemMessage(turn: Turn, target: TranslationTarget): ChatMessage {
  const texts = turn.blocks.map(({ block, path }) =>
    block.type === 'text'
      ? (block as TextBlock).text
      : untranslatable(`${path}.type`, `a system-turn block of type '${block.type}'`, target),
  );
  return { role: 'system', content: texts.join('\n\n') };
}

export function toChatMessages(request: CountTokensRequest, target: TranslationTarget): ChatMessage[] {
  const messages: ChatMessage[] = [];
  const system = systemText(request.system);
  if (system !== '') messages.push({ role: 'system', content: system });
  for (const turn of turnsOf(request.messages)) {
    if (turn.role === 'user') messages.push(...userMessages(turn, target));
    else if (turn.role === 'assistant') messages.push(assistantMessage(turn, target));
    else messages.push(systemMessage(turn, target));
  }
  return messages;
}
