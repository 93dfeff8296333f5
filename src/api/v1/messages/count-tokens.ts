import type { ChatCompletionRequest } from '../../../openai/types.js';
import type {
  CountTokensRequest,
  DocumentBlock,
  MessageBlock,
  SearchResultBlock,
  ThinkingBlock,
  ToolResultBlock,
  ToolUseBlock,
} from '../../../providers/anthropic/wire-types.js';
import { estimateUsage } from '../../../usage/usage.js';
import { inMessagesTerms } from './client-param.js';
import { toChatRequest } from './to-chat-request.js';

/**
 * `POST /v1/messages/count_tokens` for models Switchboard has no tokenizer for: an estimate, never 0 (Claude Code
 * falls back to its own count only on an error; a made-up 0 would switch its context compaction off). Text of every
 * kind is counted with the gateway's one rule (about four characters a token, usage.ts): the system prompt, text,
 * thinking, tool calls (name and input as JSON), tool results, search results, text documents, tool definitions
 * (as JSON), plus 4 characters per message, as the chat estimate counts. Media at fixed costs:
 * - an image: 1,600 tokens, the most an image costs Claude after it is scaled to its size limit (about width x
 *   height / 750), so long conversations with images are compacted early rather than late;
 * - a PDF: 2,000 tokens per page (Anthropic counts each page's text and its image), pages counted from the file's
 *   page objects (1 when the PDF hides them in compressed streams).
 * Anthropic models are not estimated: the request goes to Anthropic's own count_tokens.
 */

export const imageTokens = 1600;
export const pdfPageTokens = 2000;
const messageOverheadCharacters = 4;

/** A model's own tokenizer, counting the prompt of the translated request (the local provider's, when wired). */
export type PromptTokenCounter = (request: ChatCompletionRequest) => Promise<number>;

interface Tally {
  characters: number;
  tokens: number;
}

function pdfPages(base64: string): number {
  const text = Buffer.from(base64, 'base64').toString('latin1');
  const pages = text.match(/\/Type\s*\/Page(?![A-Za-z])/g)?.length ?? 0;
  return Math.max(1, pages);
}

function countDocument(block: DocumentBlock, tally: Tally): void {
  const source = block.source;
  if (source.type === 'base64' && source.media_type === 'application/pdf') {
    tally.tokens += pdfPages(source.data) * pdfPageTokens;
  } else if (source.type === 'text') {
    tally.characters += source.data.length;
  } else if (source.type === 'content') {
    if (typeof source.content === 'string') tally.characters += source.content.length;
    else for (const inner of source.content) countBlock(inner, tally);
  } else {
    // URLs, Files API ids, other media: what they hold is unknown here; one page's worth.
    tally.tokens += pdfPageTokens;
  }
  tally.characters += (block.title ?? '').length + (block.context ?? '').length;
}

function countBlock(block: MessageBlock, tally: Tally): void {
  switch (block.type) {
    case 'text':
      tally.characters += (block as { text: string }).text.length;
      return;
    case 'thinking':
      tally.characters += (block as ThinkingBlock).thinking.length;
      return;
    case 'image':
      tally.tokens += imageTokens;
      return;
    case 'document':
      countDocument(block as DocumentBlock, tally);
      return;
    case 'search_result': {
      const result = block as SearchResultBlock;
      tally.characters += result.title.length + result.source.length;
      for (const passage of result.content) tally.characters += passage.text.length;
      return;
    }
    case 'tool_use': {
      const use = block as ToolUseBlock;
      tally.characters += use.name.length + JSON.stringify(use.input).length;
      return;
    }
    case 'tool_result': {
      const content = (block as ToolResultBlock).content;
      if (typeof content === 'string') tally.characters += content.length;
      else for (const inner of content ?? []) countBlock(inner, tally);
      return;
    }
    default:
      // Redacted thinking, server-tool blocks, anything newer: their JSON, as text.
      tally.characters += JSON.stringify(block).length;
  }
}

export function estimateInputTokens(request: CountTokensRequest): number {
  const tally: Tally = { characters: 0, tokens: 0 };
  if (typeof request.system === 'string') tally.characters += request.system.length;
  else for (const block of request.system ?? []) tally.characters += block.text.length;
  for (const message of request.messages) {
    tally.characters += messageOverheadCharacters;
    if (typeof message.content === 'string') tally.characters += message.content.length;
    else for (const block of message.content) countBlock(block, tally);
  }
  for (const tool of request.tools ?? []) tally.characters += JSON.stringify(tool).length;
  return estimateUsage(tally.characters, 0).promptTokens + tally.tokens;
}

/**
 * The body of a count_tokens answer: from the model's own tokenizer when there is one (`counter`, given the request
 * as the local provider would receive it), else the estimate above.
 */
export async function countInputTokens(
  request: CountTokensRequest,
  counter?: PromptTokenCounter,
): Promise<{ input_tokens: number }> {
  if (!counter) return { input_tokens: estimateInputTokens(request) };
  const translation = toChatRequest(request, 'local');
  const counted = await counter(translation.request).catch((error: unknown) => {
    throw inMessagesTerms(error, translation.origins);
  });
  return { input_tokens: Math.max(1, counted) };
}
