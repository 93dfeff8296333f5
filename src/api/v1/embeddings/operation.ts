import { apiError } from '../../../errors/api-error.js';
import type { EmbeddingRequest } from '../../../openai/embedding-types.js';
import type { EmbeddingResult } from '../../../providers/provider.js';
import { type DispatchOperation, deploymentCall, type PreparedCall } from '../../../routing/operation.js';

/**
 * Embeddings as a dispatch operation: routes whose model is not an embedding model are skipped (a fallback must be
 * one too), and a deployment whose provider has no embeddings API, or cannot embed this request (Gemini and token
 * input), is refused before any call, so another deployment or fallback may serve.
 */
export function embeddingOperation(
  request: EmbeddingRequest,
  body: Buffer | undefined,
): DispatchOperation<EmbeddingResult> {
  return {
    model: request.model,
    capability: 'embeddings',
    prepare(deployment, context): PreparedCall<EmbeddingResult> {
      const provider = deployment.provider;
      const embed = provider.embed;
      if (!embed) {
        throw apiError(
          'unsupported_endpoint',
          `The model \`${request.model}\` is served by provider "${provider.name}" (${provider.type}), which has no embeddings API.`,
          { param: 'model' },
        );
      }
      const refusal = provider.embeddingRefusal?.(request, deployment.model);
      if (refusal) throw refusal;
      const call = {
        request,
        ...deploymentCall(deployment, context),
        ...(body === undefined ? {} : { body }),
      };
      return { dropped: [], send: () => embed.call(provider, call) };
    },
  };
}
