import type { Usage } from '../../openai/types.js';
import { hasBelievableCounts, hasTokenCounts } from '../../usage/usage.js';
import type { AnthropicUsage } from './wire-types.js';

const count = (value: number | null | undefined): number => (typeof value === 'number' ? value : 0);

const anthropicCounts = ['input_tokens', 'output_tokens', 'cache_read_input_tokens', 'cache_creation_input_tokens'];

/** Whether every count of Anthropic's usage object can be believed (usage.ts, isTokenCount). */
export function hasBelievableAnthropicCounts(usage: object): boolean {
  return hasTokenCounts(usage, anthropicCounts) && hasBelievableCounts(usage);
}

/**
 * Anthropic counts cache reads and cache writes apart from `input_tokens`; OpenAI's `prompt_tokens` includes every
 * prompt token, with the cached ones detailed in `prompt_tokens_details`. Undefined when a count cannot be believed (a
 * negative or fractional one): the usage is unknown, and the gateway estimates it.
 */
export function convertUsage(usage: AnthropicUsage): Usage | undefined {
  if (!hasBelievableAnthropicCounts(usage)) return undefined;
  const cacheRead = count(usage.cache_read_input_tokens);
  const cacheWrite = count(usage.cache_creation_input_tokens);
  const prompt = count(usage.input_tokens) + cacheRead + cacheWrite;
  const completion = count(usage.output_tokens);
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: cacheRead, cache_write_tokens: cacheWrite },
    completion_tokens_details: { reasoning_tokens: 0 },
  };
}
