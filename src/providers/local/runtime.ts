import { existsSync } from 'node:fs';
import path from 'node:path';
import type {
  Llama,
  LlamaChat,
  LlamaContext,
  LlamaContextSequence,
  LlamaEmbeddingContext,
  LlamaModel,
} from 'node-llama-cpp';
import type { LocalProviderConfig } from '../../config/schema.js';
import { type ApiError, apiError } from '../../errors/api-error.js';
import type { Logger } from '../../observability/logger.js';
import { type ChosenTemplate, chooseChatTemplate } from './chat-template.js';
import { defaultContextCap } from './context-cap.js';
import { defaultModel } from './default-model.js';
import { SlotPool, type SlotPoolOptions } from './slot-pool.js';
import type { StallTimeouts } from './stall-watchdog.js';

/**
 * Everything a local model needs in memory: the llama.cpp runtime, the model weights, one context with a sequence
 * per concurrent request (node-llama-cpp batches their evaluation together), the chat template, and the pool that
 * hands sequences to requests. Built once, closed once. A GGUF that declares itself an embedding model (a pooling
 * type in its metadata) gets embedding contexts instead, one per concurrent request, and no chat template.
 */

export type Library = typeof import('node-llama-cpp');

export interface LocalSlot {
  sequence: LlamaContextSequence;
  chat: LlamaChat;
}

export interface LocalRuntime {
  kind: 'chat';
  library: Library;
  llama: Llama;
  model: LlamaModel;
  context: LlamaContext;
  template: ChosenTemplate;
  /** Tokens one request may hold: prompt plus completion. */
  contextSize: number;
  vocabularySize: number;
  threads: number;
  slots: SlotPool<LocalSlot>;
  /** The provider's name, for messages. */
  name: string;
  timeouts: StallTimeouts;
  close(): Promise<void>;
}

export interface LocalEmbeddingRuntime {
  kind: 'embedding';
  library: Library;
  llama: Llama;
  model: LlamaModel;
  /** Tokens one input may have. */
  contextSize: number;
  /** The length of the model's vectors. */
  dimensions: number;
  vocabularySize: number;
  threads: number;
  slots: SlotPool<LlamaEmbeddingContext>;
  name: string;
  timeouts: StallTimeouts;
  close(): Promise<void>;
}

export type LoadedLocalModel = LocalRuntime | LocalEmbeddingRuntime;

/** GGUF pooling types that make a model produce one vector per input (mean, cls, last; not none or rank). */
const embeddingPoolingTypes: ReadonlySet<unknown> = new Set([1, 2, 3]);

/** Whether the GGUF declares an embedding model: `{architecture}.pooling_type`, as embedding GGUFs carry it. */
export function isEmbeddingModel(model: LlamaModel): boolean {
  const metadata = model.fileInfo.metadata as unknown as Record<string, unknown>;
  const architecture = (metadata.general as { architecture?: unknown } | undefined)?.architecture;
  if (typeof architecture !== 'string') return false;
  const settings = metadata[architecture] as { pooling_type?: unknown } | undefined;
  return embeddingPoolingTypes.has(settings?.pooling_type);
}

export const howToSupplyModel =
  'Fetch the built-in model with `npx switchboard models fetch` (`npm start` does it), or serve any GGUF chat model ' +
  'by configuring it: `providers: [{name: local, type: local, model_path: /path/to/model.gguf}]` and ' +
  '`models: [{name: my-model, provider: local}]` (see docs/local-model.md).';

/** Fetching helps only where the built-in model's file belongs; any other file is the operator's to put in place. */
function missingFileAdvice(config: LocalProviderConfig): string {
  if (path.basename(config.modelPath) === defaultModel.fileName) return howToSupplyModel;
  return 'Put the GGUF file there, or point `model_path` at where it is (see docs/local-model.md).';
}

/** 503 for every request while the model cannot be served; retrying will not help, so SDKs are told not to. */
export function modelUnavailable(providerName: string, reason: string): ApiError {
  return apiError('model_unavailable', `The local model of provider "${providerName}" is not available: ${reason}`, {
    headers: { 'x-should-retry': 'false' },
  });
}

function gpuOption(gpu: LocalProviderConfig['gpu']): 'auto' | false | 'cuda' | 'vulkan' | 'metal' {
  return gpu === 'cpu' ? false : gpu;
}

export async function loadLocalRuntime(config: LocalProviderConfig, logger: Logger): Promise<LoadedLocalModel> {
  if (!existsSync(config.modelPath)) {
    throw modelUnavailable(
      config.name,
      `the model file ${config.modelPath} does not exist. ${missingFileAdvice(config)}`,
    );
  }
  // Loaded on demand: configurations without a local model never pay for the native module.
  const library = await import('node-llama-cpp');
  const llama = await library.getLlama({
    // Prebuilt binaries from npm only: never download or compile llama.cpp at run time.
    build: 'never',
    gpu: gpuOption(config.gpu),
    progressLogs: false,
    logLevel: library.LlamaLogLevel.warn,
    logger: (level, message) => {
      const text = message.trim();
      if (!text) return;
      if (level === library.LlamaLogLevel.error || level === library.LlamaLogLevel.fatal) {
        logger.error({ provider: config.name }, `llama.cpp: ${text}`);
      } else {
        logger.warn({ provider: config.name }, `llama.cpp: ${text}`);
      }
    },
  });
  let model: LlamaModel | undefined;
  let context: LlamaContext | undefined;
  const embeddingContexts: LlamaEmbeddingContext[] = [];
  try {
    model = await llama.loadModel({ modelPath: config.modelPath });
    const contextSize = config.contextSize ?? Math.min(model.trainContextSize, defaultContextCap);
    // One core is left to the gateway itself (HTTP, JSON, the request log): llama.cpp's threads spin while they
    // wait, and a generation that competes with the event loop for the last core slows both down badly.
    const threads = config.threads ?? Math.max(1, llama.cpuMathCores - 1);
    if (isEmbeddingModel(model)) {
      for (let index = 0; index < config.maxConcurrent; index++) {
        embeddingContexts.push(
          await model.createEmbeddingContext({
            contextSize,
            threads,
            ...(config.batchSize === undefined ? {} : { batchSize: config.batchSize }),
          }),
        );
      }
      return embeddingRuntime(config, logger, {
        library,
        llama,
        model,
        contexts: embeddingContexts,
        contextSize,
        threads,
      });
    }
    context = await model.createContext({
      contextSize,
      sequences: config.maxConcurrent,
      threads,
      ...(config.batchSize === undefined ? {} : { batchSize: config.batchSize }),
      failedCreationRemedy: false,
    });
    const template = chooseChatTemplate(library, model, config.chatTemplate, (message) =>
      logger.warn({ provider: config.name }, message),
    );
    const slots: LocalSlot[] = [];
    for (let index = 0; index < config.maxConcurrent; index++) {
      const sequence = context.getSequence();
      slots.push({
        sequence,
        chat: new library.LlamaChat({ contextSequence: sequence, chatWrapper: template.wrapper }),
      });
    }
    const pool = new SlotPool(slots, slotPoolOptions(config, logger));
    const loadedModel = model;
    const loadedContext = context;
    return {
      kind: 'chat',
      library,
      llama,
      model: loadedModel,
      context: loadedContext,
      template,
      contextSize: loadedContext.contextSize,
      vocabularySize: vocabularySizeOf(loadedModel),
      threads,
      slots: pool,
      name: config.name,
      timeouts: config.timeouts,
      async close() {
        pool.close(modelUnavailable(config.name, 'the server is shutting down.'));
        for (const slot of slots) slot.chat.dispose();
        await loadedContext.dispose();
        await loadedModel.dispose();
        await llama.dispose();
      },
    };
  } catch (error) {
    for (const embeddingContext of embeddingContexts) await embeddingContext.dispose().catch(() => undefined);
    await context?.dispose().catch(() => undefined);
    await model?.dispose().catch(() => undefined);
    await llama.dispose().catch(() => undefined);
    throw error;
  }
}

function embeddingRuntime(
  config: LocalProviderConfig,
  logger: Logger,
  loaded: {
    library: Library;
    llama: Llama;
    model: LlamaModel;
    contexts: LlamaEmbeddingContext[];
    contextSize: number;
    threads: number;
  },
): LocalEmbeddingRuntime {
  const { library, llama, model, contexts, contextSize, threads } = loaded;
  const pool = new SlotPool(contexts, slotPoolOptions(config, logger));
  return {
    kind: 'embedding',
    library,
    llama,
    model,
    contextSize,
    dimensions: model.embeddingVectorSize,
    vocabularySize: vocabularySizeOf(model),
    threads,
    slots: pool,
    name: config.name,
    timeouts: config.timeouts,
    async close() {
      pool.close(modelUnavailable(config.name, 'the server is shutting down.'));
      for (const context of contexts) await context.dispose();
      await model.dispose();
      await llama.dispose();
    },
  };
}

function slotPoolOptions(config: LocalProviderConfig, logger: Logger): SlotPoolOptions {
  return {
    queueSize: config.queueSize,
    queuePerAccount: config.queuePerAccount,
    queueTimeoutMs: config.queueTimeoutMs,
    modelName: config.name,
    onRetired: (retired) =>
      logger.error(
        { provider: config.name, retiredSlots: retired, slots: config.maxConcurrent },
        'a local generation did not stop after its stall timeout: its slot is out of service until the server restarts',
      ),
  };
}

function vocabularySizeOf(model: LlamaModel): number {
  const tokens = model.fileInfo.metadata.tokenizer?.ggml?.tokens;
  return Array.isArray(tokens) ? tokens.length : 0;
}
