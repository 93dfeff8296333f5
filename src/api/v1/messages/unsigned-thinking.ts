import type { CountTokensRequest, MessageBlock, MessageParam } from '../../../providers/anthropic/wire-types.js';

/**
 * Thinking blocks with no signature, in a request going to Anthropic. Anthropic signs every thinking block it writes
 * and refuses one whose signature does not verify; a block without one can only come from an answer the gateway
 * translated from another provider (a fallback, or a model served by both kinds of deployment), whose reasoning has
 * no signature. Sent as it came, such a conversation would be refused by every Anthropic deployment from then on.
 * Those blocks are left out (an assistant turn holding nothing else goes too, but for a final prefill), and so is
 * `thinking` when the turn whose tool calls are being answered no longer starts with its thinking, which Anthropic
 * requires with thinking on. Undefined when there is no such block: the request goes as it came.
 */

export interface SignedRequest<Request extends CountTokensRequest> {
  request: Request;
  /** `thinking`, when it had to be left out. */
  dropped: string[];
}

const isUnsigned = (block: MessageBlock): boolean =>
  block.type === 'thinking' &&
  (typeof (block as { signature?: unknown }).signature !== 'string' ||
    (block as { signature: string }).signature === '');

export function withoutUnsignedThinking<Request extends CountTokensRequest>(
  request: Request,
): SignedRequest<Request> | undefined {
  const unsigned = (message: MessageParam) =>
    message.role === 'assistant' && Array.isArray(message.content) && message.content.some(isUnsigned);
  if (!request.messages.some(unsigned)) return undefined;
  const messages: MessageParam[] = [];
  request.messages.forEach((message, index) => {
    if (!unsigned(message)) {
      messages.push(message);
      return;
    }
    const content = (message.content as MessageBlock[]).filter((block) => !isUnsigned(block));
    if (content.length > 0 || index === request.messages.length - 1) messages.push({ ...message, content });
  });
  const cleaned: Request = { ...request, messages };
  const dropped: string[] = [];
  if (thinkingOn(request) && toolLoopWithoutThinking(messages)) {
    delete cleaned.thinking;
    dropped.push('thinking');
  }
  return { request: cleaned, dropped };
}

function thinkingOn(request: CountTokensRequest): boolean {
  const type = request.thinking?.type;
  return type !== undefined && type !== 'disabled';
}

/** The last assistant turn called tools without starting with its thinking (Anthropic's rule with thinking on). */
function toolLoopWithoutThinking(messages: readonly MessageParam[]): boolean {
  const assistant = messages.findLast((message) => message.role === 'assistant');
  if (!assistant || !Array.isArray(assistant.content)) return false;
  if (!assistant.content.some((block) => block.type === 'tool_use')) return false;
  const first = assistant.content[0]?.type;
  return first !== 'thinking' && first !== 'redacted_thinking';
}
