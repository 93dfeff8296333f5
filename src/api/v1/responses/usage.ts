import type { Usage } from '../../../openai/types.js';
import type { ResponseUsage } from './types.js';

/** Token counts between chat names (what every adapter reports) and Responses names (what the client reads). */

const count = (value: unknown): number =>
  typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0;

export function toResponseUsage(usage: Usage): ResponseUsage {
  const input = count(usage.prompt_tokens);
  const output = count(usage.completion_tokens);
  const inputDetails: ResponseUsage['input_tokens_details'] = {
    cached_tokens: count(usage.prompt_tokens_details?.cached_tokens),
  };
  const cacheWrite = count(usage.prompt_tokens_details?.cache_write_tokens);
  if (cacheWrite > 0) inputDetails.cache_write_tokens = cacheWrite;
  return {
    input_tokens: input,
    input_tokens_details: inputDetails,
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: count(usage.completion_tokens_details?.reasoning_tokens) },
    total_tokens: count(usage.total_tokens) || input + output,
  };
}

/** A Responses `usage` object (from a native upstream) in chat names, for the log and limits; undefined if unusable. */
export function fromResponseUsage(usage: unknown): Usage | undefined {
  if (!usage || typeof usage !== 'object') return undefined;
  const value = usage as {
    input_tokens?: unknown;
    output_tokens?: unknown;
    total_tokens?: unknown;
    input_tokens_details?: { cached_tokens?: unknown; cache_write_tokens?: unknown } | null;
    output_tokens_details?: { reasoning_tokens?: unknown } | null;
  };
  if (typeof value.input_tokens !== 'number' && typeof value.output_tokens !== 'number') return undefined;
  const prompt = count(value.input_tokens);
  const completion = count(value.output_tokens);
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: count(value.total_tokens) || prompt + completion,
    prompt_tokens_details: {
      cached_tokens: count(value.input_tokens_details?.cached_tokens),
      cache_write_tokens: count(value.input_tokens_details?.cache_write_tokens),
    },
    completion_tokens_details: { reasoning_tokens: count(value.output_tokens_details?.reasoning_tokens) },
  };
}
