import type { ModelConfig } from '../../config/schema.js';
import type { ChatCompletionRequest } from '../../openai/types.js';
import { parametersSet } from '../tool-choice.js';
import { refusesSampling } from './thinking-style.js';

/**
 * `temperature`, `top_p` and `top_k` for the Claude models that refuse them (thinking-style.ts): they are not
 * translated, so the router leaves them out and names them, or refuses them for a model configured to refuse; at
 * their default (temperature 1, top_p 1) they ask nothing and go silently (routing/parameters.ts).
 */

export const samplingParameters = ['temperature', 'top_p', 'top_k'] as const;

type Target = Pick<ModelConfig, 'upstreamModel' | 'parameters'>;

/** The sampling parameters the request sets that the model refuses by its name. */
export function refusedSampling(request: ChatCompletionRequest, upstreamModel: string): string[] {
  return refusesSampling(upstreamModel) ? parametersSet(request, samplingParameters) : [];
}

/**
 * The request as Anthropic will see it: without the sampling parameters the model refuses or is configured not to
 * take, which are never sent. Whether thinking can go beside a temperature is judged on this, not on what the client
 * sent; the same object when nothing is left out.
 */
export function withoutUnsentSampling(
  request: ChatCompletionRequest,
  model: Target | undefined,
): ChatCompletionRequest {
  if (!model) return request;
  const configured = model.parameters.unsupported.filter((name) =>
    (samplingParameters as readonly string[]).includes(name),
  );
  const unsent = new Set([...refusedSampling(request, model.upstreamModel), ...parametersSet(request, configured)]);
  if (unsent.size === 0) return request;
  const sent: ChatCompletionRequest = { ...request };
  for (const name of unsent) delete sent[name];
  return sent;
}
