import type { ModelConfig, ProviderConfigOf, ProviderType } from '../config/schema.js';
import type { ApiError } from '../errors/api-error.js';
import type { Logger } from '../observability/logger.js';
import type { EmbeddingList, EmbeddingRequest } from '../openai/embedding-types.js';
import type { TextCompletion, TextCompletionRequest } from '../openai/text-completion-types.js';
import type { ChatCompletion, ChatCompletionRequest, Usage } from '../openai/types.js';
import type { CancelSignal } from '../server/cancellation.js';
import type { UpstreamClient, UpstreamResponse, UpstreamTimeouts } from '../upstream/client.js';

/**
 * What every provider adapter offers the gateway. Adapters speak OpenAI on one side and their upstream's wire format
 * on the other; HTTP adapters keep translation in pure functions and do I/O only through the UpstreamClient.
 */

export interface ProviderCall {
  /** The client request as this attempt sends it (its `model` is the public name; unsupported parameters removed). */
  request: ChatCompletionRequest;
  /**
   * The configured model being served, seen from the deployment serving this attempt: `provider`, `upstreamModel`
   * and `pricing` are the deployment's.
   */
  model: ModelConfig;
  /** Timeouts for this attempt: the provider's, with the deployment's overrides applied. */
  timeouts: UpstreamTimeouts;
  /** Aborted when the client disconnects or the server gives up. */
  signal: CancelSignal;
  /** The calling account: state a provider keeps between requests (a local model's prompt cache) stays within it. */
  accountId?: string;
  /**
   * The client's request body exactly as received, present only when `request` is precisely what was parsed from it
   * (nothing removed) and its text names each member once (server/read-body.ts). An adapter that would send the same
   * JSON may send these bytes instead of serializing `request` again.
   */
  body?: Buffer;
}

export interface CompletionResult {
  /** The completion (an adapter that only outlined the upstream's bytes parses them on first use). */
  readonly completion: ChatCompletion;
  /** The upstream's exact bytes (UTF-8 JSON), to send as they are when the adapter did not need to change them. */
  raw?: Buffer;
  /** The completion's usage, when the adapter read it without parsing the rest; otherwise it is in `completion`. */
  usage?: Usage;
}

export interface StreamItem {
  chunk: ChatCompletion;
  /** The exact JSON text of the chunk when it came from the upstream unchanged (saves a serialization). */
  raw?: string;
}

/** Chunks of a stream; a plain array serves when the whole answer is already known (synthesized streams). */
export type StreamItems = AsyncIterable<StreamItem> | Iterable<StreamItem>;

/** An API an upstream may speak itself, to which a request can be forwarded as the client wrote it. */
export type ForwardedApi = 'messages' | 'messages/count_tokens' | 'responses';

/**
 * A request forwarded in an API the upstream speaks itself: the client's body with only the model name mapped, the
 * client's protocol headers passed on (never its credentials), the gateway's own key added by the provider.
 */
export interface ForwardCall {
  api: ForwardedApi;
  body: string | Buffer;
  /** Protocol headers of the client's to pass on (e.g. anthropic-version, anthropic-beta). */
  headers: Readonly<Record<string, string>>;
  /** A query string for the upstream path, without `?` (the Anthropic SDKs' `beta=true` marker). */
  query?: string;
  stream: boolean;
  model: ModelConfig;
  timeouts: UpstreamTimeouts;
  signal: CancelSignal;
  /** The calling account: a provider's connections are shared out by account. */
  accountId?: string | undefined;
}

/** What every call to one deployment carries besides its request: the model served, timeouts, cancellation. */
export interface DeploymentCall {
  /** The configured model as seen from the deployment serving this attempt (its upstream model and prices). */
  model: ModelConfig;
  timeouts: UpstreamTimeouts;
  signal: CancelSignal;
  accountId?: string;
}

/** An embeddings request for one deployment (its `model` is the public name). */
export interface EmbeddingCall extends DeploymentCall {
  request: EmbeddingRequest;
  /** The client's bytes, present only when they say exactly what `request` says (see ProviderCall.body). */
  body?: Buffer;
}

export interface EmbeddingResult {
  /** The vectors in input order, in whichever encoding the upstream used (the endpoint converts). */
  readonly list: EmbeddingList;
  /** The upstream's exact bytes, to send as they are when nothing in them must change. */
  raw?: Buffer;
}

/** A legacy text-completions request for one deployment (its `model` is the public name). */
export interface TextCompletionCall extends DeploymentCall {
  request: TextCompletionRequest;
  body?: Buffer;
}

export interface TextCompletionResult {
  readonly completion: TextCompletion;
  raw?: Buffer;
}

export interface TextStreamItem {
  chunk: TextCompletion;
  /** The chunk's exact JSON text when it came from the upstream unchanged. */
  raw?: string;
}

export type TextStreamItems = AsyncIterable<TextStreamItem> | Iterable<TextStreamItem>;

export interface Provider {
  readonly name: string;
  readonly type: ProviderType;
  /** A non-streaming completion. Throws ApiError for upstream errors (already in OpenAI shape). */
  complete(call: ProviderCall): Promise<CompletionResult>;
  /**
   * A streaming completion. The promise settles once the upstream has accepted the request, so failures before the
   * first byte are ordinary HTTP errors; failures while iterating are mid-stream failures.
   */
  stream(call: ProviderCall): Promise<StreamItems>;
  /**
   * The request parameters (top-level field names) this adapter cannot translate for its upstream. The router drops
   * or refuses them per the model's configuration; parameters set to their neutral value never reach this question.
   */
  unsupportedParameters?(request: ChatCompletionRequest, model: ModelConfig): string[];
  /**
   * Parameters whose value this model lacks, with the nearest value it has (`reasoning_effort: "xhigh"` -> `high`): the
   * router sends that instead and names `name=value`, or refuses with 400 unsupported_value. The value may be the
   * client's own where the translation picks the nearest itself (Gemini's levels): it is then only named.
   */
  replacedValues?(request: ChatCompletionRequest, model: ModelConfig): Readonly<Record<string, unknown>> | undefined;
  /** Embeddings; absent: the provider has no embeddings API (requests get 400 unsupported_endpoint). */
  embed?(call: EmbeddingCall): Promise<EmbeddingResult>;
  /** Why this provider cannot embed this request (e.g. token input); checked before the call, so others may serve. */
  embeddingRefusal?(request: EmbeddingRequest, model: ModelConfig): ApiError | undefined;
  /** A legacy text completion; absent (with streamText): the provider has no such API. */
  completeText?(call: TextCompletionCall): Promise<TextCompletionResult>;
  /** A streamed legacy text completion; settles once the upstream accepted the request, like `stream`. */
  streamText?(call: TextCompletionCall): Promise<TextStreamItems>;
  /** The tokens of a chat request's prompt, counted by the model's own tokenizer (the local model); absent: none. */
  countPromptTokens?(request: ChatCompletionRequest): Promise<number>;
  /** The APIs this provider can forward requests to unchanged (see ForwardCall); absent: none. */
  readonly forwards?: readonly ForwardedApi[];
  /**
   * Sends a forwarded request; resolves with the upstream's 2xx response (its body unread, JSON or SSE), otherwise
   * throws the provider's error in the gateway's shape.
   */
  forward?(call: ForwardCall): Promise<UpstreamResponse>;
  /** A forwarded request whose 2xx answer is read whole (JSON), in one exchange; errors as for `forward`. */
  forwardWhole?(call: ForwardCall): Promise<Buffer>;
  /** Slots in use and requests waiting, for providers with a fixed capacity (local models); absent otherwise. */
  load?(): { slots: number; busy: number; waiting: number; retired: number } | undefined;
  /** Prepares what the first request would otherwise wait for (e.g. loading a local model); never throws. */
  warmUp?(): Promise<void>;
  close?(): Promise<void>;
}

export interface ProviderDependencies {
  upstream: UpstreamClient;
  logger: Logger;
}

export type ProviderFactory<Type extends ProviderType = ProviderType> = (
  config: ProviderConfigOf<Type>,
  dependencies: ProviderDependencies,
) => Provider;
