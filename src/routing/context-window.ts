import type { ModelConfig } from '../config/schema.js';
import { type ApiError, apiError } from '../errors/api-error.js';
import type { ChatCompletionRequest } from '../openai/types.js';
import { estimatePromptCharacters } from '../usage/usage.js';

/**
 * A request that certainly does not fit a model's configured context window is not sent to it (the router goes to
 * the next fallback, or answers 400 context_length_exceeded). "Certainly": the estimate is a lower bound (six
 * characters per token; real tokenizers average about four), so a request is never refused that the model might
 * have accepted; what gets past it is left to the upstream, whose own context errors also lead to the fallbacks.
 */

const charactersPerTokenAtMost = 6;

export function minimumPromptTokens(request: ChatCompletionRequest): number {
  return Math.ceil(estimatePromptCharacters(request) / charactersPerTokenAtMost);
}

export function contextWindowError(request: ChatCompletionRequest, model: ModelConfig): ApiError | undefined {
  if (model.contextWindow === undefined) return undefined;
  const tokens = minimumPromptTokens(request);
  if (tokens <= model.contextWindow) return undefined;
  return apiError(
    'context_length_exceeded',
    `This model's maximum context length is ${model.contextWindow} tokens. However, your messages resulted in at least ${tokens} tokens. Please reduce the length of the messages.`,
    { param: 'messages' },
  );
}
