import type { ChatMessage } from '../../openai/types.js';
import { checkEnum, isObject, present, wrongType } from '../../openai/validation-helpers.js';
import type { RedactedThinkingBlock, ThinkingBlock } from './wire-types.js';

/**
 * The signed thinking of an assistant message, as the client brought it back, for the start of its Anthropic turn.
 * Two spellings are read:
 * - `thinking_blocks` (LiteLLM's, which this adapter answers with, and which LangChain, OpenHands and LiteLLM's own
 *   SDK send back): `{type: "thinking", thinking, signature}` and `{type: "redacted_thinking", data}`;
 * - `reasoning_details` (OpenRouter's, sent back by its SDKs, Cline and Roo Code), read only where the message has no
 *   `thinking_blocks`: `reasoning.text` entries (pieces of one `index` joined) and `reasoning.encrypted` ones, of
 *   Anthropic's format; entries of other formats carry another vendor's signature and are left out.
 * Text and signature are sent as they came: Anthropic verifies the signature against the text. A thinking block
 * without a signature (reasoning a translated model wrote) is left out, as Anthropic would refuse it. A malformed
 * entry is a 400 naming it.
 */

export type SignedThinking = ThinkingBlock | RedactedThinkingBlock;

const anthropicFormat = 'anthropic-claude-v1';

function fromThinkingBlocks(value: unknown, param: string): SignedThinking[] {
  if (!Array.isArray(value)) wrongType(param, 'an array', value);
  const blocks: SignedThinking[] = [];
  value.forEach((entry, index) => {
    const entryParam = `${param}[${index}]`;
    if (!isObject(entry)) wrongType(entryParam, 'an object', entry);
    checkEnum(entry.type, ['thinking', 'redacted_thinking'], `${entryParam}.type`);
    if (entry.type === 'redacted_thinking') {
      if (typeof entry.data !== 'string') wrongType(`${entryParam}.data`, 'a string', entry.data);
      blocks.push({ type: 'redacted_thinking', data: entry.data });
      return;
    }
    if (typeof entry.thinking !== 'string') wrongType(`${entryParam}.thinking`, 'a string', entry.thinking);
    const signature = entry.signature;
    if (present(signature) && typeof signature !== 'string')
      wrongType(`${entryParam}.signature`, 'a string', signature);
    if (typeof signature === 'string' && signature !== '') {
      blocks.push({ type: 'thinking', thinking: entry.thinking, signature });
    }
  });
  return blocks;
}

interface TextDetail {
  thinking: string;
  signature: string;
}

function fromReasoningDetails(value: unknown, param: string): SignedThinking[] {
  if (!Array.isArray(value)) wrongType(param, 'an array', value);
  // In order of first appearance; streamed pieces of one text share its `index`.
  const blocks: Array<SignedThinking | TextDetail> = [];
  const textByIndex = new Map<number, TextDetail>();
  value.forEach((entry, position) => {
    const entryParam = `${param}[${position}]`;
    if (!isObject(entry)) wrongType(entryParam, 'an object', entry);
    if (typeof entry.type !== 'string') wrongType(`${entryParam}.type`, 'a string', entry.type);
    if (present(entry.format) && typeof entry.format !== 'string') {
      wrongType(`${entryParam}.format`, 'a string', entry.format);
    }
    if (present(entry.format) && entry.format !== anthropicFormat) return;
    if (entry.type === 'reasoning.encrypted') {
      if (typeof entry.data !== 'string') wrongType(`${entryParam}.data`, 'a string', entry.data);
      blocks.push({ type: 'redacted_thinking', data: entry.data });
      return;
    }
    // Summaries (OpenAI's) and newer types have no Anthropic block.
    if (entry.type !== 'reasoning.text') return;
    for (const field of ['text', 'signature'] as const) {
      if (present(entry[field]) && typeof entry[field] !== 'string') {
        wrongType(`${entryParam}.${field}`, 'a string', entry[field]);
      }
    }
    const text = typeof entry.text === 'string' ? entry.text : '';
    const signature = typeof entry.signature === 'string' ? entry.signature : '';
    const index = typeof entry.index === 'number' ? entry.index : undefined;
    const open = index === undefined ? undefined : textByIndex.get(index);
    if (open) {
      open.thinking += text;
      open.signature += signature;
      return;
    }
    const detail: TextDetail = { thinking: text, signature };
    if (index !== undefined) textByIndex.set(index, detail);
    blocks.push(detail);
  });
  return blocks.flatMap((block): SignedThinking[] => {
    if ('type' in block) return [block];
    return block.signature === '' ? [] : [{ type: 'thinking', thinking: block.thinking, signature: block.signature }];
  });
}

/** The message's signed thinking blocks, in order; throws a 400 for a malformed one. */
export function signedThinkingOf(message: ChatMessage, param: string): SignedThinking[] {
  if (present(message.thinking_blocks)) return fromThinkingBlocks(message.thinking_blocks, `${param}.thinking_blocks`);
  if (present(message.reasoning_details)) {
    return fromReasoningDetails(message.reasoning_details, `${param}.reasoning_details`);
  }
  return [];
}

/**
 * Whether the message brings back signed thinking. Malformed blocks count as brought back: the translation then
 * refuses them with a 400 naming the field, rather than `thinking` being dropped (or refused) for them.
 */
export function hasSignedThinking(message: ChatMessage): boolean {
  try {
    return signedThinkingOf(message, 'message').length > 0;
  } catch {
    return true;
  }
}
