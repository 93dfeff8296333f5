import type { ModelConfig } from '../../../config/schema.js';
import type { ChatCompletionRequest } from '../../../openai/types.js';
import { anthropicStreamError } from '../../../providers/anthropic/parse-error.js';
import type { MessagesRequest } from '../../../providers/anthropic/wire-types.js';
import { parseJsonObject } from '../../../providers/http.js';
import type { CompletionResult, ForwardCall, Provider, StreamItem } from '../../../providers/provider.js';
import { chatCompletionOperation, chatStreamOperation } from '../../../routing/chat-operations.js';
import { contextWindowError } from '../../../routing/context-window.js';
import type { AttemptContext, DispatchOperation, PreparedCall } from '../../../routing/operation.js';
import { primeItems } from '../../../routing/prime-stream.js';
import type { Deployment, Route } from '../../../routing/router.js';
import type { SseEvent } from '../../../upstream/sse.js';
import { droppedInMessagesTerms, inMessagesTerms } from './client-param.js';
import { checkedNativeMessage } from './native-usage.js';
import { rewriteModel } from './rewrite-model.js';
import { samplingForModel } from './sampling-for-model.js';
import { thinkingForModel } from './thinking-for-model.js';
import { toChatRequest } from './to-chat-request.js';
import type { TranslationTarget } from './translation-target.js';
import { withoutUnsignedThinking } from './unsigned-thinking.js';

/**
 * A Messages request as dispatch operations, decided per deployment: a provider that speaks the Messages API itself
 * (Anthropic) is sent the client's request as it came, only the model name mapped; any other gets it translated to
 * chat and goes through the chat operations (parameter support, a model configured without streaming, priming).
 * What cannot be translated for a provider is refused for that deployment only, so another or a fallback may serve.
 */

/** What the client sent besides the parsed request, for deployments that are forwarded to. */
export interface ClientMessage {
  request: MessagesRequest;
  /** The client's bytes, when they name each member once (server/read-body.ts); else the request is serialized. */
  bytes: Buffer | undefined;
  /** anthropic-version and anthropic-beta, as the client sent them. */
  headers: Readonly<Record<string, string>>;
  /** `beta=true` when the client's URL had it. */
  query: string | undefined;
}

export type MessagesAnswer = { kind: 'forwarded'; body: Buffer } | { kind: 'translated'; result: CompletionResult };

export type MessagesEvents =
  | { kind: 'forwarded'; events: AsyncIterable<SseEvent> }
  | { kind: 'translated'; items: AsyncIterable<StreamItem> };

export function forwards(provider: Provider, api: 'messages' | 'messages/count_tokens'): boolean {
  return provider.forwards?.includes(api) === true;
}

/**
 * The client's body for an upstream that is forwarded to: its bytes with the model replaced, or a serialization; and
 * what had to be left out or changed (thinking blocks no Anthropic deployment would take, unsigned-thinking.ts;
 * thinking the model takes in another form or not at all, thinking-for-model.ts; sampling the model does not take,
 * sampling-for-model.ts).
 */
export function forwardedBody(client: ClientMessage, model: ModelConfig): { body: Buffer | string; dropped: string[] } {
  const upstreamModel = model.upstreamModel;
  const signed = withoutUnsignedThinking(client.request);
  const request = (signed?.request ?? client.request) as unknown as Record<string, unknown>;
  const fitted = thinkingForModel(request, model);
  const sampled = samplingForModel(fitted.body, model);
  const dropped = [...(signed?.dropped ?? []), ...fitted.dropped, ...sampled.dropped];
  if (signed || sampled.body !== request)
    return { body: JSON.stringify({ ...sampled.body, model: upstreamModel }), dropped };
  if (client.bytes) return { body: rewriteModel(client.bytes, upstreamModel).body, dropped: [] };
  return { body: JSON.stringify({ ...client.request, model: upstreamModel }), dropped: [] };
}

/** The call to an upstream that is forwarded to, and the request's parameters it leaves out. */
export function forwardCall(
  client: ClientMessage,
  api: ForwardCall['api'],
  deployment: Deployment,
  context: AttemptContext,
  stream: boolean,
): { call: ForwardCall; dropped: string[] } {
  const { body, dropped } = forwardedBody(client, deployment.model);
  const call: ForwardCall = {
    api,
    body,
    headers: client.headers,
    stream,
    model: deployment.model,
    timeouts: deployment.timeouts,
    signal: context.signal,
    accountId: context.accountId,
  };
  if (client.query !== undefined) call.query = client.query;
  return { call, dropped };
}

/** A forwarded JSON answer read whole; a connection failure while reading is the provider's error. */
export async function forwardForBody(provider: Provider, call: ForwardCall): Promise<Buffer> {
  if (provider.forwardWhole) return provider.forwardWhole(call);
  const forward = provider.forward as NonNullable<Provider['forward']>;
  return Buffer.from(await (await forward.call(provider, call)).text());
}

/**
 * A request that certainly does not fit a route's context window is not sent to it (as for chat); sized as the chat
 * request an OpenAI-compatible upstream would get. A request that cannot be translated at all is left to the
 * deployments to judge (Anthropic ones take it as it is).
 */
function contextRefusal(request: MessagesRequest) {
  let sized: ChatCompletionRequest | null | undefined;
  return (route: Route) => {
    if (route.model.contextWindow === undefined) return undefined;
    if (sized === undefined) {
      try {
        sized = toChatRequest(request, 'openai').request;
      } catch {
        sized = null;
      }
    }
    return sized ? contextWindowError(sized, route.model) : undefined;
  };
}

/** How one kind of Messages request (whole or streamed) is answered, by forwarding or by chat translation. */
interface MessagesAnswering<Answer, ChatResult> {
  stream: boolean;
  forwarded(provider: Provider, call: ForwardCall, context: AttemptContext): Promise<Answer>;
  chatOperation(chat: ChatCompletionRequest): DispatchOperation<ChatResult>;
  translated(result: ChatResult): Answer;
}

function messagesDispatch<Answer, ChatResult>(
  client: ClientMessage,
  answering: MessagesAnswering<Answer, ChatResult>,
): DispatchOperation<Answer> {
  const request = client.request;
  return {
    model: request.model,
    refuseRoute: contextRefusal(request),
    prepare(deployment, context): PreparedCall<Answer> {
      const provider = deployment.provider;
      if (forwards(provider, 'messages')) {
        const { call, dropped } = forwardCall(client, 'messages', deployment, context, answering.stream);
        return { dropped, send: () => answering.forwarded(provider, call, context) };
      }
      // Throws a 400 for what this provider type cannot express: this deployment is skipped.
      const translation = toChatRequest(request, provider.type as TranslationTarget);
      // What the provider (or upstream) refuses in the chat request is named as the client's Messages field.
      let prepared: PreparedCall<ChatResult>;
      try {
        prepared = answering.chatOperation(translation.request).prepare(deployment, context);
      } catch (error) {
        throw inMessagesTerms(error, translation.origins);
      }
      return {
        dropped: [...translation.dropped, ...droppedInMessagesTerms(prepared.dropped, translation.origins)],
        send: async () => {
          try {
            return answering.translated(await prepared.send());
          } catch (error) {
            throw inMessagesTerms(error, translation.origins);
          }
        },
      };
    },
  };
}

export function messagesOperation(client: ClientMessage): DispatchOperation<MessagesAnswer> {
  return messagesDispatch<MessagesAnswer, CompletionResult>(client, {
    stream: false,
    forwarded: async (provider, call) => ({
      kind: 'forwarded',
      body: checkedNativeMessage(provider.name, await forwardForBody(provider, call)),
    }),
    chatOperation: (chat) => chatCompletionOperation(chat, undefined),
    translated: (result) => ({ kind: 'translated', result }),
  });
}

/** Events that count as content: once one reached the client, a failure can no longer fail over. */
const isContentEvent = (event: SseEvent) => event.event?.startsWith('content_block') === true;

/**
 * The upstream's events as they come. An `error` event before any content (an overload right after
 * `message_start`) fails the attempt, so another deployment may serve; after content it is relayed as it came.
 */
async function* forwardedEvents(provider: Provider, call: ForwardCall): AsyncGenerator<SseEvent> {
  const forward = provider.forward as NonNullable<Provider['forward']>;
  const response = await forward.call(provider, call);
  let content = false;
  for await (const event of response.events()) {
    if (!content) {
      if (event.event === 'error') {
        throw anthropicStreamError(provider.name, parseJsonObject(provider.name, event.data, 'stream data'));
      }
      content = isContentEvent(event);
    }
    yield event;
  }
}

export function messagesStreamOperation(
  client: ClientMessage,
  /** Told of a failure after the stream was primed (reported in-band by the caller; recorded by dispatch). */
  onFailure: (error: unknown) => void,
): DispatchOperation<MessagesEvents> {
  return messagesDispatch<MessagesEvents, AsyncIterable<StreamItem>>(client, {
    stream: true,
    forwarded: async (provider, call) => ({
      kind: 'forwarded',
      events: await primeItems(forwardedEvents(provider, call), isContentEvent, onFailure),
    }),
    chatOperation: (chat) => chatStreamOperation(chat, undefined, onFailure),
    translated: (items) => ({ kind: 'translated', items }),
  });
}
