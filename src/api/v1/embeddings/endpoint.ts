import { renderOpenAiError } from '../../../errors/render-openai.js';
import type { EmbeddingRequest } from '../../../openai/embedding-types.js';
import type { Endpoint } from '../pipeline/endpoint.js';
import { answerEmbeddings, estimateEmbeddingUsage } from './answer.js';
import { validateEmbeddingRequest } from './validate-request.js';

/** POST /v1/embeddings: for models configured with `capabilities: [embeddings]`. */
export const embeddingsEndpoint: Endpoint<EmbeddingRequest> = {
  name: 'embeddings',
  readsBody: true,
  dispatches: true,
  modelCapability: 'embeddings',
  renderError: renderOpenAiError,
  parse: ({ body }) => validateEmbeddingRequest(body),

  /** The input's tokens; an embedding generates none. */
  reserve(request) {
    return { promptTokens: estimateEmbeddingUsage(request).promptTokens, completionTokens: 0 };
  },

  handle(request, exchange, body) {
    return answerEmbeddings(request, body?.forwardable ? body.bytes : undefined, exchange);
  },
};
