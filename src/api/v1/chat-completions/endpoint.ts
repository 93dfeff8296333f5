import { renderOpenAiError } from '../../../errors/render-openai.js';
import type { ChatCompletionRequest } from '../../../openai/types.js';
import { validateChatRequest } from '../../../openai/validate-chat-request.js';
import { estimatePromptCharacters, estimateUsage } from '../../../usage/usage.js';
import type { Endpoint } from '../pipeline/endpoint.js';
import { completeChat } from './complete.js';
import { streamChat } from './stream.js';

/** POST /v1/chat/completions: answered as JSON or as an SSE stream. */
export const chatCompletionsEndpoint: Endpoint<ChatCompletionRequest> = {
  name: 'chat_completions',
  readsBody: true,
  dispatches: true,
  renderError: renderOpenAiError,
  parse: ({ body }) => validateChatRequest(body),

  /** The prompt, plus max_tokens (or the configured completion reserve) for each choice. */
  reserve(request, defaultCompletionTokens) {
    const promptTokens = estimateUsage(estimatePromptCharacters(request), 0).promptTokens;
    const completionLimit = request.max_completion_tokens ?? request.max_tokens ?? defaultCompletionTokens;
    const choices = typeof request.n === 'number' && request.n > 1 ? request.n : 1;
    return { promptTokens, completionTokens: completionLimit * choices };
  },

  handle(request, exchange, body) {
    // The client's bytes may be forwarded only when they say exactly what was validated (server/read-body.ts).
    const forwardable = body?.forwardable ? body.bytes : undefined;
    return request.stream === true
      ? streamChat(request, forwardable, exchange)
      : completeChat(request, forwardable, exchange);
  },
};
