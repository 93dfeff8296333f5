import type { TextCompletionRequest } from '../../../openai/text-completion-types.js';
import { eachText } from '../../../openai/texts-or-tokens.js';
import { estimateUsage, type TokenUsage } from '../../../usage/usage.js';

/** Prompt size for estimates: characters of text prompts, and ~4 characters for each token of token prompts. */
export function promptCharacters(request: TextCompletionRequest): number {
  let characters = 0;
  for (const prompt of eachText(request.prompt)) {
    characters += typeof prompt === 'string' ? prompt.length : prompt.length * 4;
  }
  return characters;
}

/** Usage estimated (and marked so) for an upstream that reported none. */
export function estimateTextUsage(request: TextCompletionRequest, completionCharacters: number): TokenUsage {
  return estimateUsage(promptCharacters(request), completionCharacters);
}

/** Completions one request asks for: one per prompt, times `best_of` (or `n`). */
export function completionsAsked(request: TextCompletionRequest): number {
  const perPrompt = Math.max(
    typeof request.n === 'number' ? request.n : 1,
    typeof request.best_of === 'number' ? request.best_of : 1,
  );
  return eachText(request.prompt).length * perPrompt;
}
