import type { Usage } from '../../openai/types.js';
import type { AnthropicUsage } from './wire-types.js';

const count = (value: number | null | undefined): number =>
  typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0;

/**
 * Anthropic counts cache reads and cache writes apart from `input_tokens`; OpenAI's `prompt_tokens` includes every
 * prompt token, with the cached ones detailed in `prompt_tokens_details`.
 */
export function convertUsage(usage: AnthropicUsage): Usage {
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
