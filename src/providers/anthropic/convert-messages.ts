import type { ChatMessage } from '../../openai/types.js';
import { convertParts, parseToolArguments, textOf, untranslatable } from '../message-content.js';
import { splitToolCallId } from '../tool-call-id.js';
import { cacheControlOf, convertPart } from './convert-content.js';
import { signedThinkingOf } from './convert-thinking.js';
import type { AnthropicMessage, RequestBlock, TextBlock, ToolResultBlock, TurnBlock } from './wire-types.js';

/**
 * OpenAI messages -> Anthropic `system` + `messages`:
 * - system and developer messages, wherever they are, become the top-level system blocks, in order;
 * - assistant tool calls become `tool_use` blocks (arguments parsed from their JSON string), after the message's signed
 *   thinking (`thinking_blocks`, see convert-thinking.ts), which Anthropic wants first in the turn;
 * - tool messages become `tool_result` blocks in a user turn; consecutive ones share one turn (Anthropic wants every
 *   result of a parallel call in the turn right after it), and a following user message joins that turn after them;
 * - a message-level `cache_control` marks the message's last block.
 */

export interface ConvertedMessages {
  system: TextBlock[];
  messages: AnthropicMessage[];
}

function markLast(blocks: RequestBlock[], cacheControl: unknown): void {
  const cache = cacheControlOf(cacheControl);
  const last = blocks.at(-1);
  if (cache && last) last.cache_control = cache;
}

function contentBlocks(content: unknown, param: string): RequestBlock[] {
  return convertParts(content, param, convertPart);
}

function toolResult(message: ChatMessage, param: string): ToolResultBlock {
  const id = splitToolCallId(String(message.tool_call_id)).id;
  const content = message.content;
  // Text parts with cache markers keep their shape; plain text is sent as a string.
  const keepParts = Array.isArray(content) && content.some((part) => cacheControlOf(part?.cache_control));
  const result: ToolResultBlock = {
    type: 'tool_result',
    tool_use_id: id,
    content: keepParts ? (contentBlocks(content, `${param}.content`) as TextBlock[]) : textOf(content),
  };
  const cache = cacheControlOf(message.cache_control);
  if (cache) result.cache_control = cache;
  return result;
}

export function convertMessages(messages: readonly ChatMessage[]): ConvertedMessages {
  const system: TextBlock[] = [];
  const converted: AnthropicMessage[] = [];
  const append = (role: AnthropicMessage['role'], blocks: TurnBlock[]) => {
    if (blocks.length === 0) return;
    const last = converted.at(-1);
    if (last?.role === role) last.content.push(...blocks);
    else converted.push({ role, content: blocks });
  };

  // Anthropic takes a tool result only as the answer to a tool call of the assistant message just before it.
  let openCalls = new Set<string>();
  messages.forEach((message, index) => {
    const param = `messages[${index}]`;
    switch (message.role) {
      case 'system':
      case 'developer': {
        const blocks = contentBlocks(message.content, `${param}.content`) as TextBlock[];
        markLast(blocks, message.cache_control);
        system.push(...blocks);
        return;
      }
      case 'user': {
        const blocks = contentBlocks(message.content, `${param}.content`);
        markLast(blocks, message.cache_control);
        append('user', blocks);
        return;
      }
      case 'assistant': {
        // No content (null beside tool calls) is no parts.
        const blocks = contentBlocks(message.content, `${param}.content`);
        (message.tool_calls ?? []).forEach((call, callIndex) => {
          const callParam = `${param}.tool_calls[${callIndex}]`;
          if (call.type !== 'function') throw untranslatable(`${callParam}.type`, 'anthropic', 'a custom tool call');
          blocks.push({
            type: 'tool_use',
            id: splitToolCallId(call.id).id,
            name: call.function.name,
            input: parseToolArguments(call.function.arguments, `${callParam}.function.arguments`),
          });
        });
        markLast(blocks, message.cache_control);
        append('assistant', [...signedThinkingOf(message, param), ...blocks]);
        openCalls = new Set((message.tool_calls ?? []).map((call) => splitToolCallId(call.id).id));
        return;
      }
      case 'tool':
        if (!openCalls.has(splitToolCallId(String(message.tool_call_id)).id)) {
          // Decided here, as Anthropic would, naming the client's field rather than a path of the translated request.
          throw untranslatable(
            `${param}.tool_call_id`,
            'anthropic',
            'a tool result whose tool_call_id answers no tool call of the assistant message before it',
          );
        }
        append('user', [toolResult(message, param)]);
        return;
      default:
        throw untranslatable(`${param}.role`, 'anthropic', `a message with role '${message.role}'`);
    }
  });

  // Tool results must open the user turn that answers the tool calls.
  for (const message of converted) {
    if (message.role !== 'user') continue;
    const results = message.content.filter((block) => block.type === 'tool_result');
    if (results.length === 0 || results.length === message.content.length) continue;
    message.content = [...results, ...message.content.filter((block) => block.type !== 'tool_result')];
  }
  return { system, messages: converted };
}
