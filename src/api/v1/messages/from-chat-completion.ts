import { reasoningText } from '../../../openai/reasoning-text.js';
import type { ChatCompletion } from '../../../openai/types.js';
import type { AnthropicResponse, ResponseBlock } from '../../../providers/anthropic/wire-types.js';
import { randomId } from '../../../providers/tool-call-id.js';
import { type MessageUsage, toAnthropicUsage } from './anthropic-usage.js';
import { mapFinishReason, matchedStopSequence } from './map-finish-reason.js';
import { toolInput } from './tool-input.js';

/**
 * An OpenAI `chat.completion` -> an Anthropic message: `reasoning_content` -> a thinking block first (with an empty
 * signature: no chat upstream issues one), then the text (or a refusal's text), then one `tool_use` block per tool
 * call with its arguments parsed (see tool-input.ts). Only the first choice is read: the request never asks for more.
 */

export interface MessageContext {
  /** The model the client asked for: named in the answer when the upstream names none. */
  model: string;
  stopSequences?: readonly string[] | undefined;
  /** `msg_` + 24 random characters unless given. */
  messageId?: string;
}

export interface TranslatedMessage extends AnthropicResponse {
  usage: MessageUsage;
}

export const newMessageId = (): string => randomId('msg_');

interface ChatToolCall {
  id?: unknown;
  function?: { name?: unknown; arguments?: unknown };
}

export function fromChatCompletion(completion: ChatCompletion, context: MessageContext): TranslatedMessage {
  const choice = completion.choices[0];
  const message = (choice?.message ?? {}) as Record<string, unknown>;
  const content: ResponseBlock[] = [];
  const reasoning = reasoningText(message);
  if (reasoning !== undefined) content.push({ type: 'thinking', thinking: reasoning, signature: '' });
  const text = typeof message.content === 'string' && message.content !== '' ? message.content : undefined;
  const refusal = typeof message.refusal === 'string' && message.refusal !== '' ? message.refusal : undefined;
  if (text !== undefined || refusal !== undefined) content.push({ type: 'text', text: text ?? refusal ?? '' });
  const toolCalls = Array.isArray(message.tool_calls) ? (message.tool_calls as ChatToolCall[]) : [];
  for (const call of toolCalls) {
    content.push({
      type: 'tool_use',
      id: typeof call.id === 'string' && call.id !== '' ? call.id : randomId('toolu_'),
      name: typeof call.function?.name === 'string' ? call.function.name : '',
      input: toolInput(call.function?.arguments),
    });
  }
  const stop =
    refusal !== undefined && text === undefined
      ? { stop_reason: 'refusal' as const, stop_sequence: null }
      : mapFinishReason(
          choice?.finish_reason,
          toolCalls.length > 0,
          matchedStopSequence(choice, context.stopSequences),
        );
  return {
    id: context.messageId ?? newMessageId(),
    type: 'message',
    role: 'assistant',
    model: typeof completion.model === 'string' && completion.model !== '' ? completion.model : context.model,
    content,
    stop_reason: stop.stop_reason,
    stop_sequence: stop.stop_sequence,
    usage: toAnthropicUsage(completion.usage),
  };
}
