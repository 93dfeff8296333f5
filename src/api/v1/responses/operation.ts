import type { ModelConfig } from '../../../config/schema.js';
import { toApiError } from '../../../errors/api-error.js';
import { thinkingStyleOf } from '../../../providers/anthropic/thinking-style.js';
import type { CompletionResult, StreamItem } from '../../../providers/provider.js';
import { chatCompletionOperation, chatStreamOperation } from '../../../routing/chat-operations.js';
import { contextWindowError } from '../../../routing/context-window.js';
import type { DispatchOperation, PreparedCall } from '../../../routing/operation.js';
import type { Deployment } from '../../../routing/router.js';
import type { UpstreamResponse } from '../../../upstream/client.js';
import { droppedInResponsesTerms, inResponsesTerms } from './client-param.js';
import { unsupportedParameter } from './errors.js';
import { reasoningHistoryFor } from './reasoning-history.js';
import { asksForSummary, withReasoningSummary } from './reasoning-summary.js';
import { type ChatTranslation, toChatRequest } from './to-chat-request.js';
import type { InputItem, ResponsesRequest } from './types.js';

/**
 * `/v1/responses` as a dispatch operation. Each deployment is reached one of two ways:
 * - translated: the request (with the replayed history) becomes a chat completion, whole or streamed, through the
 *   same chat operations as /v1/chat/completions (parameter support, context window, streams primed up to their
 *   first content so they can still fail over); the translation is made once per model of the route chain, since
 *   what is refused or left out follows that model's `parameters.on_unsupported`;
 * - native: for deployments whose model or provider is marked `responses_api: native`, the Responses body goes to the
 *   upstream's own `/responses` as it came (only `model` changed, and the gateway's history in `input` when it
 *   resolved `previous_response_id` itself), so reasoning items, `encrypted_content` and unknown item types pass
 *   through untouched.
 * Signed thinking brought back from reasoning items (`thinking_blocks`, convert-items.ts) is Anthropic's: only Anthropic
 * deployments get it; for others it is left out and named, as OpenAI's own encrypted reasoning is. A reasoning
 * summary is asked of the providers that can give one, per deployment (reasoning-summary.ts).
 */

export type ResponsesResult =
  | { kind: 'chat'; translation: ChatTranslation; result: CompletionResult }
  | { kind: 'chat-stream'; translation: ChatTranslation; items: AsyncIterable<StreamItem> }
  | { kind: 'native'; response: UpstreamResponse };

export interface ResponsesPlan {
  request: ResponsesRequest;
  /** The stored conversation replayed before the input (previous_response_id), oldest first. */
  history: readonly InputItem[];
  /** The translation for the requested model, made before dispatch so its 400s reach the client as they are. */
  first: { model: string; translation: ChatTranslation } | undefined;
  /** The native upstream body without the model (the client's bytes are used when they can be). */
  nativeBody: (upstreamModel: string) => string | Buffer;
  /** What the native body leaves out of the client's (the gateway's own envelopes of Claude's thinking). */
  nativeDropped?: readonly string[];
}

/** Whether a deployment takes Responses requests natively. */
export function isNative(deployment: Deployment): boolean {
  const provider = deployment.provider;
  return (
    deployment.model.responsesApi === 'native' &&
    provider.forward !== undefined &&
    provider.forwards?.includes('responses') === true
  );
}

/** The chat translation for a model of the route chain (its own unsupported-parameter policy). */
export function translateFor(
  request: ResponsesRequest,
  history: readonly InputItem[],
  model: ModelConfig,
): ChatTranslation {
  return toChatRequest(request, history, { onUnsupported: model.parameters.onUnsupported });
}

export function responsesOperation(
  plan: ResponsesPlan,
  /** Told of a stream's failure after it was primed (the caller reports it in-band; dispatch records it). */
  onStreamFailure: (error: unknown) => void,
): DispatchOperation<ResponsesResult> {
  const { request } = plan;
  const translations = new Map<string, ChatTranslation>();
  if (plan.first) translations.set(plan.first.model, plan.first.translation);
  const translation = (model: ModelConfig): ChatTranslation => {
    let found = translations.get(model.name);
    if (!found) {
      found = translateFor(request, plan.history, model);
      translations.set(model.name, found);
    }
    return found;
  };
  const settled = new Map<string, ChatTranslation>();
  const summarized = asksForSummary(request);
  const translationFor = (deployment: Deployment): ChatTranslation => {
    const forProvider = providerTranslation(deployment);
    return summarized ? withReasoningSummary(forProvider, deployment) : forProvider;
  };
  const providerTranslation = (deployment: Deployment): ChatTranslation => {
    const provider = deployment.provider.type;
    const asked = request.include?.includes('reasoning.encrypted_content') === true;
    // Only a Claude model that thinks signs its thinking; one that cannot reads history as a chat model does.
    const signs =
      provider === 'anthropic' &&
      deployment.model.parameters.thinking !== 'none' &&
      thinkingStyleOf(deployment.model) !== 'none';
    if (!signs && asked && deployment.model.parameters.onUnsupported === 'refuse') {
      throw unsupportedParameter('include.reasoning.encrypted_content', 'cannot be honoured by this model.');
    }
    const key = `${provider}\u0000${deployment.model.name}`;
    let found = settled.get(key);
    if (!found) {
      const reader = provider === 'anthropic' && !signs ? 'unsigned' : provider;
      found = reasoningHistoryFor(reader, translation(deployment.model), request);
      settled.set(key, found);
    }
    return found;
  };
  const stream = request.stream === true;
  return {
    model: request.model,
    refuseRoute(route) {
      // A fallback that cannot take the request as it is (a refused parameter) is skipped like one too small for it.
      try {
        const onlyNative = route.deployments.length > 0 && route.deployments.every(isNative);
        return onlyNative ? undefined : contextWindowError(translation(route.model).request, route.model);
      } catch (error) {
        return toApiError(error);
      }
    },
    prepare(deployment, context): PreparedCall<ResponsesResult> {
      if (isNative(deployment)) {
        const forward = deployment.provider.forward as NonNullable<Deployment['provider']['forward']>;
        const call = {
          api: 'responses' as const,
          body: plan.nativeBody(deployment.model.upstreamModel),
          headers: {},
          stream,
          model: deployment.model,
          timeouts: deployment.timeouts,
          signal: context.signal,
          accountId: context.accountId,
        };
        return {
          dropped: plan.nativeDropped ?? [],
          send: async () => ({
            kind: 'native',
            response: await forward.call(deployment.provider, call),
          }),
        };
      }
      const translated = translationFor(deployment);
      // What the provider (or upstream) refuses in the chat request is named as the client's Responses field.
      const named = async <T>(send: () => Promise<T>): Promise<T> => {
        try {
          return await send();
        } catch (error) {
          throw inResponsesTerms(error, translated.origins);
        }
      };
      // Refusals of the chat request's parameters (prepare) are named as the client's field too.
      const preparedNamed = <T>(prepare: () => T): T => {
        try {
          return prepare();
        } catch (error) {
          throw inResponsesTerms(error, translated.origins);
        }
      };
      if (stream) {
        const prepared = preparedNamed(() =>
          chatStreamOperation(translated.request, undefined, onStreamFailure).prepare(deployment, context),
        );
        return {
          dropped: [...translated.dropped, ...droppedInResponsesTerms(prepared.dropped)],
          send: async () => ({ kind: 'chat-stream', translation: translated, items: await named(prepared.send) }),
        };
      }
      const prepared = preparedNamed(() =>
        chatCompletionOperation(translated.request, undefined).prepare(deployment, context),
      );
      return {
        dropped: [...translated.dropped, ...droppedInResponsesTerms(prepared.dropped)],
        send: async () => ({ kind: 'chat', translation: translated, result: await named(prepared.send) }),
      };
    },
  };
}
