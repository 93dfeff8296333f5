import type { ModelConfig } from '../../config/schema.js';
import type { ChatCompletionRequest } from '../../openai/types.js';
import { thinks } from './convert-request.js';
import { withoutUnsentSampling } from './refused-sampling.js';
import type { ThinkingStyle } from './thinking-style.js';

/**
 * A request whose client wants to see Claude's reasoning (Responses' `reasoning.summary`). Claude 4 models return
 * their thinking summarized (the default `display` of `thinking: {type: "enabled"}`), and older ones return it whole:
 * either way it is what the client reads as the summary, so the request only has to make Claude think. A request
 * that asks for no thinking at all gets OpenAI's default reasoning effort, `medium` (a 2048-token budget): what an
 * OpenAI reasoning model does with a summary and no effort.
 */

export const summaryEffort = 'medium';

/**
 * The request under which Claude thinks: as it is when it already does, with the default effort when it asks nothing
 * of thinking; undefined when Claude will not think (effort `none`, thinking disabled, sampling or a forced tool
 * Anthropic refuses thinking beside, a tool loop whose signed thinking was not brought back).
 */
export function withThinkingShown(
  request: ChatCompletionRequest,
  style: ThinkingStyle = 'budget',
  model?: Pick<ModelConfig, 'upstreamModel' | 'parameters'>,
): ChatCompletionRequest | undefined {
  // Judged beside the sampling that is sent (a model that refuses a temperature is not sent one).
  const thinksAsSent = (candidate: ChatCompletionRequest) => thinks(withoutUnsentSampling(candidate, model), style);
  if (thinksAsSent(request)) return request;
  const asksNothing =
    (request.thinking === undefined || request.thinking === null) &&
    (request.reasoning_effort === undefined || request.reasoning_effort === null);
  if (!asksNothing) return undefined;
  const withEffort: ChatCompletionRequest = { ...request, reasoning_effort: summaryEffort };
  return thinksAsSent(withEffort) ? withEffort : undefined;
}
