import type { Usage } from '../../openai/types.js';
import { hasTokenCounts } from '../../usage/usage.js';
import type { GeminiUsageMetadata } from './wire-types.js';

const count = (value: number | undefined): number => (typeof value === 'number' ? value : 0);

const geminiCounts = [
  'promptTokenCount',
  'toolUsePromptTokenCount',
  'thoughtsTokenCount',
  'candidatesTokenCount',
  'cachedContentTokenCount',
  'totalTokenCount',
];

/**
 * Gemini's `usageMetadata` as OpenAI usage. `promptTokenCount` already includes cached tokens; thinking tokens
 * (`thoughtsTokenCount`) are counted apart from `candidatesTokenCount`, while OpenAI's `completion_tokens` includes
 * reasoning, so they are added in and detailed as `reasoning_tokens`. Undefined when a count cannot be believed (a
 * negative or fractional one): the usage is unknown, and the gateway estimates it.
 */
export function convertUsage(usage: GeminiUsageMetadata): Usage | undefined {
  if (!hasTokenCounts(usage, geminiCounts)) return undefined;
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
