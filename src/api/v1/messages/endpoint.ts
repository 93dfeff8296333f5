import { renderAnthropicError } from '../../../errors/render-anthropic.js';
import type { CountTokensRequest, MessagesRequest } from '../../../providers/anthropic/wire-types.js';
import type { ParsedBody } from '../../../server/read-body.js';
import type { Endpoint, Exchange } from '../pipeline/endpoint.js';
import { completeMessage } from './complete.js';
import { estimateInputTokens } from './count-tokens.js';
import { answerCountTokens } from './count-tokens-answer.js';
import { betaQuery, clientProtocolHeaders } from './native-request.js';
import type { ClientMessage } from './operation.js';
import { setAnthropicRateLimitHeaders, withAnthropicRateLimitHeaders } from './rate-limit-headers.js';
import { streamMessage } from './stream.js';
import { validateCountTokensRequest, validateMessagesRequest } from './validate-request.js';

/**
 * POST /v1/messages and /v1/messages/count_tokens: Anthropic's Messages API for every model, with Anthropic's error
 * shape. Authentication (Bearer only), limits, routing and the log are the pipeline's, as for chat completions.
 */

function clientMessage<Request extends CountTokensRequest>(
  request: Request,
  exchange: Exchange,
  body: ParsedBody | undefined,
): ClientMessage {
  setAnthropicRateLimitHeaders(exchange.response);
  return {
    request: request as MessagesRequest,
    // Only bytes that say exactly what was validated may be forwarded as they are (server/read-body.ts).
    bytes: body?.forwardable ? body.bytes : undefined,
    headers: clientProtocolHeaders(exchange.headers),
    query: betaQuery(exchange.url),
  };
}

const renderMessagesError = (error: unknown, requestId: string) =>
  withAnthropicRateLimitHeaders(renderAnthropicError(error, requestId));

export const messagesEndpoint: Endpoint<MessagesRequest> = {
  name: 'messages',
  readsBody: true,
  dispatches: true,
  renderError: renderMessagesError,
  parse: ({ body }) => validateMessagesRequest(body),

  /** The prompt (estimated as count_tokens estimates it), plus max_tokens. */
  reserve(request) {
    return { promptTokens: estimateInputTokens(request), completionTokens: request.max_tokens };
  },

  handle(request, exchange, body) {
    const client = clientMessage(request, exchange, body);
    return request.stream === true ? streamMessage(client, exchange) : completeMessage(client, exchange);
  },
};

export const countTokensEndpoint: Endpoint<CountTokensRequest> = {
  name: 'count_tokens',
  readsBody: true,
  dispatches: true,
  renderError: renderMessagesError,
  // `stream` means nothing here; the pipeline must not log a count as a stream.
  parse: ({ body }) => {
    const request = validateCountTokensRequest(body);
    return request.stream === undefined ? request : { ...request, stream: undefined };
  },

  /** Nothing is generated: only the key's request rate applies. */
  reserve() {
    return { promptTokens: 0, completionTokens: 0 };
  },

  handle(request, exchange, body) {
    return answerCountTokens(clientMessage(request, exchange, body), exchange);
  },
};
