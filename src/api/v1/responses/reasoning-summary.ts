import { withThinkingShown } from '../../../providers/anthropic/shown-thinking.js';
import { thinkingStyleOf } from '../../../providers/anthropic/thinking-style.js';
import { canThink, geminiThinking } from '../../../providers/gemini/thinking.js';
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
 * - a model that cannot reason (`parameters.thinking: none`, or a Claude model before 3.7): left out and named, or
 *   refused;
 * - Gemini: `include_reasoning`, which the adapter sends as `thinkingConfig.includeThoughts`: the thought summaries
 *   (a Gemini model that does not think, by its name, cannot be asked);
 * - any other provider (a chat upstream, the local model): the gateway has no way to ask, so it is left out and named,
 *   or refused when the model is configured to refuse.
 * Whatever reasoning text comes back is shown as the summary only when a summary was asked for
 * (from-chat-completion.ts, stream-events.ts), as OpenAI does.
 */

export function asksForSummary(request: ResponsesRequest): boolean {
  return summarySetting(request) !== null;
}

/**
 * The translation asking the deployment's provider for the reasoning; undefined when it cannot be asked. A model
 * that does not think (Gemini 2.0 refuses `thinkingConfig`, Claude 3.5 refuses `thinking`) is known by its name for
 * Gemini, and otherwise configured so, with `reasoning.summary` (or, for Claude, the `reasoning_effort` that would turn
 * thinking on) in `parameters.unsupported`.
 */
function askedOfProvider(translation: ChatTranslation, deployment: Deployment): ChatTranslation | undefined {
  const unsupported = deployment.model.parameters.unsupported;
  if (unsupported.includes('reasoning.summary') || deployment.model.parameters.thinking === 'none') return undefined;
  switch (deployment.provider.type) {
    case 'gemini':
      if (!canThink(geminiThinking(deployment.model))) return undefined;
      return { ...translation, request: { ...translation.request, include_reasoning: true } };
    case 'anthropic': {
      const shown = withThinkingShown(translation.request, thinkingStyleOf(deployment.model), deployment.model);
      if (!shown) return undefined;
      // The field that turns thinking on, unless the model's configuration takes it away.
      const askedBy = shown.thinking !== undefined && shown.thinking !== null ? 'thinking' : 'reasoning_effort';
      if (unsupported.includes(askedBy)) return undefined;
      return shown === translation.request ? translation : { ...translation, request: shown };
    }
    default:
      return undefined;
  }
}

export function withReasoningSummary(translation: ChatTranslation, deployment: Deployment): ChatTranslation {
  const asked = askedOfProvider(translation, deployment);
  if (asked) return asked;
  if (deployment.model.parameters.onUnsupported === 'refuse') {
    throw unsupportedParameter('reasoning.summary', 'cannot be honoured by this model.');
  }
  return { ...translation, dropped: [...new Set([...translation.dropped, 'reasoning.summary'])] };
}
