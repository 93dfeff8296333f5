import type { ProviderType } from '../../../config/schema.js';
import type { ChatMessage } from '../../../openai/types.js';
import type { ChatTranslation } from './to-chat-request.js';
import type { ResponsesRequest } from './types.js';

/**
 * The reasoning brought back in a conversation's history, as each kind of provider can take it. The translation
 * (convert-items.ts) puts every reasoning item's text in its assistant message's `reasoning_content`, and Claude's
 * signed thinking also in `thinking_blocks`; then, per deployment:
 * - Anthropic reads `thinking_blocks` only: reasoning without a signature is left out (Anthropic would refuse it);
 * - an OpenAI-compatible server gets `reasoning_content` (DeepSeek refuses the turn after a tool call without it,
 *   vLLM and SGLang read it back), never the signed blocks, which only Anthropic can check;
 * - Gemini and the built-in model read neither: both are left out;
 * - a Claude model that cannot think (`unsigned`) takes no thinking blocks: the signed ones are left out.
 * What is left out is named for the `x-switchboard-dropped-parameters` header; history is never refused.
 */

/** Whether the include asks for Claude's signed thinking, which no other provider's answer has. */
function asksForEncryptedReasoning(request: ResponsesRequest): boolean {
  return request.include?.includes('reasoning.encrypted_content') === true;
}

function withDropped(translation: ChatTranslation, names: readonly string[]): string[] {
  return [...new Set([...translation.dropped, ...names])];
}

function messagesWithout(
  messages: readonly ChatMessage[],
  fields: readonly ('thinking_blocks' | 'reasoning_content')[],
): ChatMessage[] {
  return messages.map((message) => {
    if (!fields.some((field) => message[field] !== undefined)) return message;
    const copy = { ...message };
    for (const field of fields) delete copy[field];
    return copy;
  });
}

export function reasoningHistoryFor(
  provider: ProviderType | 'unsigned',
  translation: ChatTranslation,
  request: ResponsesRequest,
): ChatTranslation {
  const messages = translation.request.messages;
  const signed = messages.some((message) => message.thinking_blocks !== undefined);
  const reasoned = messages.some((message) => message.reasoning_content !== undefined);
  if (provider === 'anthropic') {
    if (!translation.unsignedReasoning) return translation;
    return { ...translation, dropped: withDropped(translation, ['input.reasoning']) };
  }
  const dropped: string[] = [];
  if (signed) dropped.push('input.reasoning.encrypted_content');
  if (asksForEncryptedReasoning(request)) dropped.push('include.reasoning.encrypted_content');
  const fields: ('thinking_blocks' | 'reasoning_content')[] = ['thinking_blocks'];
  if (provider !== 'openai' && provider !== 'unsigned' && reasoned) {
    fields.push('reasoning_content');
    dropped.push('input.reasoning');
  }
  if (dropped.length === 0) return translation;
  const stripped = signed || fields.length > 1;
  return {
    ...translation,
    request: stripped ? { ...translation.request, messages: messagesWithout(messages, fields) } : translation.request,
    dropped: withDropped(translation, dropped),
  };
}
