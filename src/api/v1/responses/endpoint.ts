import { renderOpenAiError } from '../../../errors/render-openai.js';
import { estimateUsage } from '../../../usage/usage.js';
import type { Endpoint } from '../pipeline/endpoint.js';
import { createResponse } from './create.js';
import type { ResponsesRequest } from './types.js';
import { inputCharacters } from './usage.js';
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
