import type { LocalProviderConfig } from '../../config/schema.js';
import { ApiError, apiError } from '../../errors/api-error.js';
import type { ChatCompletionRequest } from '../../openai/types.js';
import type {
  CompletionResult,
  EmbeddingCall,
  EmbeddingResult,
  Provider,
  ProviderCall,
  ProviderDependencies,
  StreamItem,
  StreamItems,
  TextCompletionCall,
  TextCompletionResult,
  TextStreamItems,
} from '../provider.js';
import { embedLocally } from './embed.js';
import { countPromptTokens, type GenerationEvent, generate, prepareGeneration } from './generate.js';
import { holdUntilRead } from './hold-until-read.js';
import type { FinishReason } from './map-stop-reason.js';
import {
  type LoadedLocalModel,
  type LocalEmbeddingRuntime,
  type LocalRuntime,
  loadLocalRuntime,
  modelUnavailable,
} from './runtime.js';
import { completeTextLocally, streamTextLocally } from './serve-text.js';
import {
  contentChunk,
  finishChunk,
  type LocalUsage,
  newIdentity,
  reasoningChunk,
  roleChunk,
  toCompletion,
  usageChunk,
} from './to-openai.js';

/** After a failed load, requests get the same error for this long before loading is tried again. */
const reloadBackoffMs = 10_000;

/**
 * A GGUF model run in-process by node-llama-cpp: no upstream, no network. The model loads once (at start-up via
 * warmUp, or on first use) and answers with the same OpenAI objects an upstream would, so authentication, the request
 * log, usage and the SSE writer work unchanged.
 */
export function createLocalProvider(config: LocalProviderConfig, dependencies: ProviderDependencies): Provider {
  const logger = dependencies.logger;
  let loading: Promise<LoadedLocalModel> | undefined;
  let loaded: LoadedLocalModel | undefined;
  let lastFailure: { error: ApiError; at: number } | undefined;
  let closed = false;

  async function load(): Promise<LoadedLocalModel> {
    const startedAt = performance.now();
    logger.info({ provider: config.name, modelPath: config.modelPath }, 'loading local model');
    try {
      const runtime = await loadLocalRuntime(config, logger);
      loaded = runtime;
      logger.info(
        {
          provider: config.name,
          modelPath: config.modelPath,
          kind: runtime.kind,
          contextSize: runtime.contextSize,
          maxConcurrent: config.maxConcurrent,
          threads: runtime.threads,
          gpu: runtime.llama.gpu || 'cpu',
          ...(runtime.kind === 'chat'
            ? { chatTemplate: runtime.template.description }
            : { dimensions: runtime.dimensions }),
          loadMs: Math.round(performance.now() - startedAt),
        },
        'local model loaded',
      );
      return runtime;
    } catch (error) {
      const apiError =
        error instanceof ApiError
          ? error
          : modelUnavailable(
              config.name,
              `loading ${config.modelPath} failed: ${error instanceof Error ? error.message : String(error)}`,
            );
      logger.error({ provider: config.name, modelPath: config.modelPath }, apiError.message);
      throw apiError;
    }
  }

  function runtime(): Promise<LoadedLocalModel> {
    if (closed) return Promise.reject(modelUnavailable(config.name, 'the server is shutting down.'));
    if (loading) return loading;
    if (lastFailure && Date.now() - lastFailure.at < reloadBackoffMs) return Promise.reject(lastFailure.error);
    const attempt = load();
    loading = attempt;
    attempt.catch((error: ApiError) => {
      // A model file supplied after start-up is picked up by a later request, without a restart.
      lastFailure = { error, at: Date.now() };
      if (loading === attempt) loading = undefined;
    });
    return attempt;
  }

  /** The chat runtime; an embedding GGUF cannot generate text. */
  async function chatRuntime(): Promise<LocalRuntime> {
    const current = await runtime();
    if (current.kind === 'chat') return current;
    throw apiError(
      'unsupported_endpoint',
      `The local model of provider "${config.name}" (${config.modelPath}) is an embedding model; it serves /v1/embeddings only.`,
      { param: 'model' },
    );
  }

  async function embeddingRuntime(): Promise<LocalEmbeddingRuntime> {
    const current = await runtime();
    if (current.kind === 'embedding') return current;
    throw apiError(
      'unsupported_endpoint',
      `The local model of provider "${config.name}" (${config.modelPath}) is not an embedding model (its GGUF declares no pooling type); serve an embedding GGUF for /v1/embeddings (see docs/local-model.md).`,
      { param: 'model' },
    );
  }

  async function start(call: ProviderCall) {
    const current = await chatRuntime();
    const prepared = await prepareGeneration(current, config, call);
    const lease = await current.slots.acquire(call.signal, call.accountId);
    return { events: generate(current, lease, prepared, call), lease };
  }

  return {
    name: config.name,
    type: config.type,

    load() {
      if (!loaded) return { slots: config.maxConcurrent, busy: 0, waiting: 0, retired: 0 };
      const { slots } = loaded;
      return { slots: slots.size, busy: slots.busy, waiting: slots.waiting, retired: slots.retired };
    },

    async warmUp(): Promise<void> {
      await runtime().catch(() => undefined);
    },

    async embed(call: EmbeddingCall): Promise<EmbeddingResult> {
      return embedLocally(await embeddingRuntime(), call);
    },

    async complete(call: ProviderCall): Promise<CompletionResult> {
      const { events } = await start(call);
      const identity = newIdentity(call.request.model);
      let content = '';
      let reasoning = '';
      let finish: { finishReason: FinishReason; stopSequence?: string; usage: LocalUsage } | undefined;
      for await (const event of events) {
        if (event.type === 'content') content += event.text;
        else if (event.type === 'reasoning') reasoning += event.text;
        else finish = event;
      }
      if (!finish) throw new Error('the local generation ended without finishing');
      return { completion: toCompletion(identity, { content, reasoning, ...finish }) };
    },

    async stream(call: ProviderCall): Promise<StreamItems> {
      const { events, lease } = await start(call);
      const claim = holdUntilRead(lease, call.signal);
      const identity = newIdentity(call.request.model);
      async function* chunks(): AsyncGenerator<StreamItem> {
        claim();
        let generating = false;
        try {
          yield { chunk: roleChunk(identity) };
          generating = true;
          for await (const event of events as AsyncIterable<GenerationEvent>) {
            if (event.type === 'content') yield { chunk: contentChunk(identity, event.text) };
            else if (event.type === 'reasoning') yield { chunk: reasoningChunk(identity, event.text) };
            else {
              yield { chunk: finishChunk(identity, event) };
              yield { chunk: usageChunk(identity, event.usage) };
            }
          }
        } finally {
          // A reader that stopped after the role chunk never started the generation, which would have released it.
          if (!generating) lease.release();
        }
      }
      return chunks();
    },

    async countPromptTokens(request: ChatCompletionRequest): Promise<number> {
      return countPromptTokens(await chatRuntime(), request);
    },

    async completeText(call: TextCompletionCall): Promise<TextCompletionResult> {
      return completeTextLocally(await chatRuntime(), call);
    },

    async streamText(call: TextCompletionCall): Promise<TextStreamItems> {
      return streamTextLocally(await chatRuntime(), call);
    },

    async close(): Promise<void> {
      closed = true;
      const current = loading;
      loading = undefined;
      loaded = undefined;
      const runtime = await current?.catch(() => undefined);
      await runtime?.close();
    },
  };
}
