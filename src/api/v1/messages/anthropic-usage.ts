import type { Usage } from '../../../openai/types.js';
import type { AnthropicUsage } from '../../../providers/anthropic/wire-types.js';
import { readUsage } from '../../../usage/usage.js';

/** Anthropic's token counts, every field present (what its responses and message_delta events carry). */
export interface MessageUsage extends AnthropicUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

/**
 * OpenAI usage -> Anthropic's: OpenAI's `prompt_tokens` counts every prompt token, cached ones included; Anthropic's
 * `input_tokens` excludes cache reads and writes, which have fields of their own. Missing usage reads as zeros: the
 * caller puts the gateway's estimate in first when the upstream reported none.
 */
export function toAnthropicUsage(usage: Usage | null | undefined): MessageUsage {
  const read = readUsage(usage);
  if (!read) return { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
  const cacheRead = Math.min(read.cachedTokens, read.promptTokens);
  const cacheWrite = Math.min(read.cacheWriteTokens, read.promptTokens - cacheRead);
  return {
    input_tokens: read.promptTokens - cacheRead - cacheWrite,
    output_tokens: read.completionTokens,
    cache_creation_input_tokens: cacheWrite,
    cache_read_input_tokens: cacheRead,
  };
}
