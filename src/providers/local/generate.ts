import type { ChatHistoryItem, LlamaGrammar, Token } from 'node-llama-cpp';
import type { LocalProviderConfig } from '../../config/schema.js';
import { type ApiError, apiError } from '../../errors/api-error.js';
import type { ChatCompletionRequest } from '../../openai/types.js';
import type { ProviderCall } from '../provider.js';
import { EventChannel } from './event-channel.js';
import { abortError, generationFailed } from './generation-errors.js';
import { type GenerationOptions, readGenerationOptions } from './generation-options.js';
import { type FinishReason, mapStopReason, matchedStop } from './map-stop-reason.js';
import type { LocalRuntime, LocalSlot } from './runtime.js';
import type { SlotLease } from './slot-pool.js';
import { StallWatchdog } from './stall-watchdog.js';
import { toChatHistory } from './to-chat-history.js';
import type { LocalUsage } from './to-openai.js';

/**
 * One generation on one slot: the prompt is rendered and counted before a slot is taken (so a prompt that cannot fit
 * is a 400, not a silently truncated conversation), then node-llama-cpp generates token by token and every piece of
 * text is handed on as soon as it exists. The client's disconnect aborts the generation at the next token.
 */

export type GenerationEvent =
  | { type: 'content'; text: string }
  | { type: 'reasoning'; text: string }
  | { type: 'finish'; finishReason: FinishReason; stopSequence?: string; usage: LocalUsage };

export interface PreparedGeneration {
  history: ChatHistoryItem[];
  promptTokens: Token[];
  options: GenerationOptions;
  /** Completion tokens allowed: the request's limit, never more than what is left of the context. */
  maxTokens: number;
  grammar: LlamaGrammar | undefined;
}

/** A penalty window comfortably longer than a typical answer, so OpenAI's "so far" semantics roughly hold. */
const penaltyWindowTokens = 256;

function contextLengthExceeded(contextSize: number, promptTokens: number): ApiError {
  return apiError(
    'context_length_exceeded',
    `This model's maximum context length is ${contextSize} tokens. However, your messages resulted in ${promptTokens} tokens. Please reduce the length of the messages.`,
    { param: 'messages' },
  );
}

async function buildGrammar(runtime: LocalRuntime, options: GenerationOptions): Promise<LlamaGrammar | undefined> {
  const format = options.responseFormat;
  if (format.type === 'text') return undefined;
  if (format.type === 'json_object') return runtime.llama.getGrammarFor('json');
  try {
    return await runtime.llama.createGrammarForJsonSchema(format.schema as never);
  } catch (error) {
    throw apiError(
      'invalid_value',
      `The JSON schema cannot be enforced by the local model: ${error instanceof Error ? error.message : String(error)}`,
      { param: 'response_format.json_schema.schema' },
    );
  }
}

export async function prepareGeneration(
  runtime: LocalRuntime,
  config: LocalProviderConfig,
  call: ProviderCall,
): Promise<PreparedGeneration> {
  const options = readGenerationOptions(call.request, {
    modelName: call.request.model,
    vocabularySize: runtime.vocabularySize,
    defaultMaxTokens: config.defaultMaxTokens,
  });
  const history = toChatHistory(call.request.messages, call.request.model);
  const state = runtime.template.wrapper.generateContextState({ chatHistory: history });
  const promptTokens = state.contextText.tokenize(runtime.model.tokenizer);
  // At least one token must be left to generate.
  if (promptTokens.length >= runtime.contextSize) throw contextLengthExceeded(runtime.contextSize, promptTokens.length);
  const available = runtime.contextSize - promptTokens.length;
  const maxTokens = Math.min(options.maxTokens ?? available, available);
  return { history, promptTokens, options, maxTokens, grammar: await buildGrammar(runtime, options) };
}

/** The prompt's tokens as the model would be given them (its chat template applied), without generating. */
export function countPromptTokens(runtime: LocalRuntime, request: ChatCompletionRequest): number {
  const history = toChatHistory(request.messages, request.model);
  const state = runtime.template.wrapper.generateContextState({ chatHistory: history });
  return state.contextText.tokenize(runtime.model.tokenizer).length;
}

/**
 * Runs the generation on the leased slot and yields its events; the slot is released once the generation has
 * really stopped (finished, failed or aborted), so the next request never shares a sequence with a winding-down one.
 */
export async function* generate(
  runtime: LocalRuntime,
  lease: SlotLease<LocalSlot>,
  prepared: PreparedGeneration,
  call: ProviderCall,
): AsyncGenerator<GenerationEvent> {
  const { signal } = call;
  const { sequence, chat } = lease.slot;
  // The slot's state came from another account's prompt: reusing it would let this account measure (by speed, or by
  // cached_tokens) whether its prompt starts like someone else's. Prompt caching stays within an account.
  if (lease.previousOwner !== call.accountId && sequence.contextTokens.length > 0) {
    try {
      await sequence.clearHistory();
    } catch (error) {
      lease.release();
      throw generationFailed(error);
    }
  }
  const { options } = prepared;
  const abort = new AbortController();
  const forwardAbort = () => abort.abort(signal.reason);
  if (signal.aborted) forwardAbort();
  else signal.addEventListener('abort', forwardAbort, { once: true });

  const channel = new EventChannel<GenerationEvent>();
  const watchdog = new StallWatchdog(runtime.timeouts, runtime.name, (error) => {
    abort.abort(error);
    channel.fail(error);
  });
  const meterBefore = sequence.tokenMeter.getState();
  // What the slot still holds from its previous request and this prompt starts with: evaluated already. The last
  // prompt token is always evaluated again, to produce the logits of the first new token.
  const reused = sequence.compareContextTokens(prepared.promptTokens).firstDifferentIndex;
  const cachedTokens = Math.max(0, Math.min(reused, prepared.promptTokens.length - 1));
  let reasoningTokens = 0;

  let tokenBias: InstanceType<LocalRuntime['library']['TokenBias']> | undefined;
  if (options.logitBias.length > 0) {
    tokenBias = new runtime.library.TokenBias(runtime.model.tokenizer);
    for (const [token, bias] of options.logitBias) {
      tokenBias.set(token as Token, bias <= -100 ? 'never' : { logit: bias });
    }
  }
  const penalties = options.frequencyPenalty !== 0 || options.presencePenalty !== 0;

  let settled = false;
  const generation = chat
    .generateResponse(prepared.history, {
      signal: abort.signal,
      stopOnAbortSignal: false,
      maxTokens: prepared.maxTokens,
      temperature: options.temperature,
      topP: options.topP,
      topK: options.topK,
      minP: options.minP,
      ...(options.seed === undefined ? {} : { seed: options.seed }),
      customStopTriggers: options.stop,
      trimWhitespaceSuffix: false,
      repeatPenalty: penalties
        ? {
            penalty: 1,
            frequencyPenalty: options.frequencyPenalty,
            presencePenalty: options.presencePenalty,
            lastTokens: penaltyWindowTokens,
          }
        : false,
      ...(tokenBias === undefined ? {} : { tokenBias }),
      ...(prepared.grammar === undefined ? {} : { grammar: prepared.grammar }),
      onResponseChunk: (chunk) => {
        watchdog.progress();
        if (chunk.type === undefined) {
          if (chunk.text) channel.push({ type: 'content', text: chunk.text });
        } else if (chunk.segmentType === 'thought') {
          reasoningTokens += chunk.tokens.length;
          if (chunk.text) channel.push({ type: 'reasoning', text: chunk.text });
        }
      },
    })
    .then(
      (response) => {
        const used = sequence.tokenMeter.diff(meterBefore);
        const stopSequence = matchedStop(response.metadata, options.stop);
        channel.push({
          type: 'finish',
          finishReason: mapStopReason(response.metadata.stopReason),
          ...(stopSequence === undefined ? {} : { stopSequence }),
          usage: {
            promptTokens: prepared.promptTokens.length,
            cachedTokens,
            // Every token the model sampled, including the end-of-turn token or a stop sequence's tokens.
            completionTokens: used.usedOutputTokens,
            reasoningTokens,
          },
        });
        channel.end();
      },
      (error: unknown) => channel.fail(signal.aborted ? abortError(signal.reason) : generationFailed(error)),
    )
    .finally(() => {
      settled = true;
      watchdog.stop();
    });

  try {
    yield* channel;
  } finally {
    signal.removeEventListener('abort', forwardAbort);
    if (!settled) abort.abort(signal.aborted ? signal.reason : 'consumer_stopped');
    await watchdog.returnSlot(lease, generation);
  }
}
