import type { Token } from 'node-llama-cpp';
import { type ApiError, apiError } from '../../errors/api-error.js';
import type { TextCompletionRequest } from '../../openai/text-completion-types.js';
import { eachText } from '../../openai/texts-or-tokens.js';
import { type GenerationOptions, readGenerationOptions } from './generation-options.js';
import type { LocalRuntime } from './runtime.js';

/**
 * A legacy completions request made ready for the local model: each prompt as the tokens the model continues from (a
 * raw prompt, no chat template; template markers typed in it are the model's special tokens, as llama.cpp's own
 * server reads raw prompts), checked against the context and the vocabulary before a slot is taken; the sampling
 * settings as for chat, and max_tokens 16 when unset (OpenAI's default for this API). What the local model cannot do
 * is a 400 naming the parameter: several completions per prompt (`n`, `best_of`) and fill-in-the-middle (`suffix`).
 */

export interface PreparedPrompt {
  tokens: Token[];
  /** Tokens the gateway put before the prompt (the model's BOS): evaluated, but not echoed. */
  added: number;
  /** Completion tokens allowed: max_tokens, never more than what is left of the context. */
  maxTokens: number;
}

export interface PreparedTextGeneration {
  prompts: PreparedPrompt[];
  options: GenerationOptions;
  echo: boolean;
  /** Top alternatives to report per token (0-5); undefined: no logprobs. */
  logprobs: number | undefined;
}

/** OpenAI's max_tokens when a legacy completions request sets none. */
const defaultMaxTokens = 16;

function unsupported(message: string, param: string): ApiError {
  return apiError('unsupported_parameter', message, { param });
}

function checkRequest(request: TextCompletionRequest): void {
  const model = request.model;
  if (typeof request.n === 'number' && request.n > 1) {
    throw unsupported(`The model \`${model}\` generates one completion per prompt; 'n' must be 1.`, 'n');
  }
  if (typeof request.best_of === 'number' && request.best_of > 1) {
    throw unsupported(`The model \`${model}\` generates one completion per prompt; 'best_of' must be 1.`, 'best_of');
  }
  if (typeof request.suffix === 'string' && request.suffix.length > 0) {
    throw unsupported(
      `The model \`${model}\` does not fill in the middle; send the request without 'suffix'.`,
      'suffix',
    );
  }
}

function promptTokens(
  runtime: LocalRuntime,
  prompt: string | number[],
  param: string,
): { tokens: Token[]; added: number } {
  if (typeof prompt !== 'string') {
    const outside = prompt.findIndex((token) => token >= runtime.vocabularySize);
    if (outside !== -1) {
      throw apiError(
        'invalid_value',
        `Invalid '${param}[${outside}]': ${prompt[outside]} is not a token id of this model (0 to ${runtime.vocabularySize - 1}).`,
        { param: `${param}[${outside}]` },
      );
    }
    return { tokens: prompt as Token[], added: 0 };
  }
  const tokens = runtime.model.tokenize(prompt, true);
  const bos = runtime.model.tokens.bos;
  if (runtime.model.tokens.shouldPrependBosToken && bos !== null && tokens[0] !== bos) {
    return { tokens: [bos, ...tokens], added: 1 };
  }
  return { tokens, added: 0 };
}

export function prepareTextGeneration(runtime: LocalRuntime, request: TextCompletionRequest): PreparedTextGeneration {
  checkRequest(request);
  const options = readGenerationOptions(
    {
      model: request.model,
      messages: [],
      temperature: request.temperature,
      top_p: request.top_p,
      seed: request.seed,
      stop: request.stop,
      frequency_penalty: request.frequency_penalty,
      presence_penalty: request.presence_penalty,
      logit_bias: request.logit_bias,
      max_tokens: request.max_tokens,
    },
    { modelName: request.model, vocabularySize: runtime.vocabularySize, defaultMaxTokens },
  );
  const list = eachText(request.prompt);
  const single = typeof request.prompt === 'string' || typeof request.prompt[0] === 'number';
  const prompts = list.map((prompt, index): PreparedPrompt => {
    const param = single ? 'prompt' : `prompt[${index}]`;
    const { tokens, added } = promptTokens(runtime, prompt, param);
    if (tokens.length === 0) {
      throw apiError(
        'invalid_value',
        `Invalid '${param}': the prompt is empty, and this model has no beginning-of-text token to continue from.`,
        { param },
      );
    }
    if (tokens.length >= runtime.contextSize) {
      throw apiError(
        'context_length_exceeded',
        `This model's maximum context length is ${runtime.contextSize} tokens, however you requested ${tokens.length} tokens in the prompt. Please reduce your prompt.`,
        { param },
      );
    }
    const available = runtime.contextSize - tokens.length;
    return { tokens, added, maxTokens: Math.min(options.maxTokens ?? defaultMaxTokens, available) };
  });
  return {
    prompts,
    options,
    echo: request.echo === true,
    logprobs: typeof request.logprobs === 'number' ? request.logprobs : undefined,
  };
}
