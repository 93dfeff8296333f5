import type { ModelConfig, ProviderConfigOf, ProviderType } from '../config/schema.js';
import type { Logger } from '../observability/logger.js';
import type { ChatCompletion, ChatCompletionRequest } from '../openai/types.js';
import type { UpstreamClient } from '../upstream/client.js';

/**
 * What every provider adapter offers the gateway. Adapters speak OpenAI on one side and their upstream's wire format
 * on the other; HTTP adapters keep translation in pure functions and do I/O only through the UpstreamClient.
 */

export interface ProviderCall {
  /** The validated client request (its `model` is the public name). */
  request: ChatCompletionRequest;
  /** The configured model being served (upstream model name, pricing, …). */
  model: ModelConfig;
  /** Aborted when the client disconnects or the server gives up. */
  signal: AbortSignal;
  /** The calling account: state a provider keeps between requests (a local model's prompt cache) stays within it. */
  accountId?: string;
}

export interface CompletionResult {
  completion: ChatCompletion;
  /** The exact JSON text to send when the adapter did not need to change the upstream's body. */
  raw?: string;
}

export interface StreamItem {
  chunk: ChatCompletion;
  /** The exact JSON text of the chunk when it came from the upstream unchanged (saves a serialization). */
  raw?: string;
}

/** Chunks of a stream; a plain array serves when the whole answer is already known (synthesized streams). */
export type StreamItems = AsyncIterable<StreamItem> | Iterable<StreamItem>;

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
  /** Slots in use and requests waiting, for providers with a fixed capacity (local models); absent otherwise. */
  load?(): { slots: number; busy: number; waiting: number } | undefined;
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
