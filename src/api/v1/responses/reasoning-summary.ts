import { withThinkingShown } from '../../../providers/anthropic/shown-thinking.js';
import type { Deployment } from '../../../routing/router.js';
import { unsupportedParameter } from './errors.js';
import { summarySetting } from './response-object.js';
import type { ChatTranslation } from './to-chat-request.js';
import type { ResponsesRequest } from './types.js';

/**
 * `reasoning.summary` (or the deprecated `reasoning.generate_summary`) per deployment, since only some providers can
 * be asked for their model's reasoning:
 * - Anthropic: Claude thinks (with the default effort when the request asks nothing of thinking), and its thinking,
 *   which Claude 4 models already summarize, is the summary; when Claude cannot think for this request (effort
 *   `none`, sampling Anthropic refuses thinking beside, a tool loop without its signed thinking) it is left out;
 * - Gemini: `include_reasoning`, which the adapter sends as `thinkingConfig.includeThoughts`: the thought summaries;
 * - any other provider (a chat upstream, the local model): the gateway has no way to ask, so it is left out and named,
 *   or refused when the model is configured to refuse.
 * Whatever reasoning text comes back is shown as the summary only when a summary was asked for (from-chat-completion.ts,
 * stream-events.ts), as OpenAI does.
 */

export function asksForSummary(request: ResponsesRequest): boolean {
  return summarySetting(request) !== null;
}

export function withReasoningSummary(translation: ChatTranslation, deployment: Deployment): ChatTranslation {
  const type = deployment.provider.type;
  if (type === 'gemini') return { ...translation, request: { ...translation.request, include_reasoning: true } };
  const shown = type === 'anthropic' ? withThinkingShown(translation.request) : undefined;
  if (shown) return shown === translation.request ? translation : { ...translation, request: shown };
  if (deployment.model.parameters.onUnsupported === 'refuse') {
    throw unsupportedParameter('reasoning.summary', 'cannot be honoured by this model.');
  }
  return { ...translation, dropped: [...new Set([...translation.dropped, 'reasoning.summary'])] };
}
