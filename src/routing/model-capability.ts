import type { ModelCapability, ModelConfig } from '../config/schema.js';
import { type ApiError, apiError } from '../errors/api-error.js';

/**
 * Whether a configured model serves a kind of request (`capabilities` in its configuration): the pipeline refuses a
 * request to a model without the endpoint's capability, and dispatch skips fallbacks without it. A 400 naming
 * `model`, not a 404: the caller may use the model, only not on this endpoint.
 */
export function capabilityRefusal(model: ModelConfig, capability: ModelCapability): ApiError | undefined {
  if (model.capabilities.includes(capability)) return undefined;
  const configured = `capabilities: [${model.capabilities.join(', ')}]`;
  const message =
    capability === 'embeddings'
      ? `The model \`${model.name}\` is not an embedding model (${configured}); /v1/embeddings needs a model configured with \`capabilities: [embeddings]\`.`
      : `The model \`${model.name}\` is an embedding model (${configured}); it serves /v1/embeddings only.`;
  return apiError('unsupported_model', message, { param: 'model' });
}
