import { renderOpenAiError } from '../../../errors/render-openai.js';
import { estimateUsage } from '../../../usage/usage.js';
import type { Endpoint } from '../pipeline/endpoint.js';
import { createResponse } from './create.js';
import type { ResponsesRequest } from './types.js';
import { validateResponsesRequest } from './validate-request.js';

/** POST /v1/responses: answered as JSON or as an SSE stream; stored unless `store: false`. */
export const responsesEndpoint: Endpoint<ResponsesRequest> = {
  name: 'responses',
  readsBody: true,
  dispatches: true,
  renderError: renderOpenAiError,
  parse: ({ body }) => validateResponsesRequest(body),

  /** The input (a replayed conversation is settled from real usage), plus max_output_tokens or the reserve. */
  reserve(request, defaultCompletionTokens) {
    const promptTokens = estimateUsage(inputCharacters(request), 0).promptTokens;
    return { promptTokens, completionTokens: request.max_output_tokens ?? defaultCompletionTokens };
  },

  handle(request, exchange, body) {
    return createResponse(exchange.services.responses, request, exchange, body);
  },
};

/** The characters of the request's text, for the reservation (an estimate, like chat's). */
function inputCharacters(request: ResponsesRequest): number {
  let characters = typeof request.instructions === 'string' ? request.instructions.length : 0;
  const input = request.input;
  if (typeof input === 'string') return characters + input.length;
  if (!Array.isArray(input)) return characters;
  for (const item of input) {
    characters += 4;
    const record = item as Record<string, unknown>;
    for (const field of ['content', 'output', 'arguments']) {
      const value = record[field];
      if (typeof value === 'string') characters += value.length;
      else if (Array.isArray(value)) {
        for (const part of value) {
          const text = (part as { text?: unknown } | null)?.text;
          if (typeof text === 'string') characters += text.length;
        }
      }
    }
  }
  return characters;
}
