import { renderOpenAiError } from '../../../errors/render-openai.js';
import type { TextCompletionRequest } from '../../../openai/text-completion-types.js';
import { estimateUsage } from '../../../usage/usage.js';
import type { Endpoint } from '../pipeline/endpoint.js';
import { completeText } from './complete.js';
import { streamText } from './stream.js';
import { completionsAsked, promptCharacters } from './usage.js';
import { validateTextCompletionRequest } from './validate-request.js';

/** OpenAI's default max_tokens for legacy completions. */
export const defaultTextMaxTokens = 16;

/** POST /v1/completions (legacy text completions): answered as JSON or as an SSE stream, for chat models. */
export const completionsEndpoint: Endpoint<TextCompletionRequest> = {
  name: 'completions',
  readsBody: true,
  dispatches: true,
  modelCapability: 'chat',
  renderError: renderOpenAiError,
  parse: ({ body }) => validateTextCompletionRequest(body),

  /** The prompts, plus max_tokens (default 16, as OpenAI's) for each completion asked for. */
  reserve(request) {
    const promptTokens = estimateUsage(promptCharacters(request), 0).promptTokens;
    const maxTokens = typeof request.max_tokens === 'number' ? request.max_tokens : defaultTextMaxTokens;
    return { promptTokens, completionTokens: maxTokens * completionsAsked(request) };
  },

  handle(request, exchange, body) {
    const forwardable = body?.forwardable ? body.bytes : undefined;
    return request.stream === true
      ? streamText(request, forwardable, exchange)
      : completeText(request, forwardable, exchange);
  },
};
