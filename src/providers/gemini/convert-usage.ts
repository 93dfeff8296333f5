import type { Usage } from '../../openai/types.js';
import type { GeminiUsageMetadata } from './wire-types.js';

const count = (value: number | undefined): number =>
  typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0;

/**
 * Gemini's `usageMetadata` as OpenAI usage. `promptTokenCount` already includes cached tokens; thinking tokens
 * (`thoughtsTokenCount`) are counted apart from `candidatesTokenCount`, while OpenAI's `completion_tokens` includes
 * reasoning, so they are added in and detailed as `reasoning_tokens`.
 */
export function convertUsage(usage: GeminiUsageMetadata): Usage {
  const prompt = count(usage.promptTokenCount) + count(usage.toolUsePromptTokenCount);
  const reasoning = count(usage.thoughtsTokenCount);
  const completion = count(usage.candidatesTokenCount) + reasoning;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: count(usage.cachedContentTokenCount) },
    completion_tokens_details: { reasoning_tokens: reasoning },
  };
}
