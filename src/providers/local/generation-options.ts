import { type ApiError, apiError } from '../../errors/api-error.js';
import type { ChatCompletionRequest } from '../../openai/types.js';

/**
 * The sampling and stopping settings of one request, read from the OpenAI fields. A request that sets neither
 * temperature nor top_p gets the sampling llama.cpp's own OpenAI-compatible server uses (temperature 0.8, top_p 0.95,
 * min_p 0.05, top_k 40), which suits small local models far better than OpenAI's temperature 1. A request that sets
 * either gets exactly OpenAI's semantics: the other one at OpenAI's default, no top_k or min_p truncation
 * (temperature 0 is greedy and deterministic). What a local model cannot do is refused with a 400 naming the field.
 */

export type ResponseFormat = { type: 'text' } | { type: 'json_object' } | { type: 'json_schema'; schema: unknown };

export interface GenerationOptions {
  temperature: number;
  topP: number;
  topK: number;
  minP: number;
  /** Undefined: a fresh random seed per request. */
  seed: number | undefined;
  /** Undefined: until the model ends its turn or the context is full. */
  maxTokens: number | undefined;
  stop: string[];
  frequencyPenalty: number;
  presencePenalty: number;
  /** Token id -> bias, as OpenAI's logit_bias (−100 bans a token, +100 all but forces it). */
  logitBias: Array<[token: number, bias: number]>;
  responseFormat: ResponseFormat;
}

/** When the client chose no sampling at all. */
/**
 * Temperatures under this sample greedily, as 0 does. llama.cpp divides the logits by the temperature in 32-bit
 * floats: a tiny one (1e-38) makes them infinite, the softmax NaN and the sampler pick tokens a JSON-schema grammar
 * forbids (node-llama-cpp then stalls the slot's generation for good). Below 0.01 the distribution is the argmax's
 * anyway, but for near-ties.
 */
export const greedyBelowTemperature = 0.01;

function samplingTemperature(temperature: number): number {
  return temperature < greedyBelowTemperature ? 0 : temperature;
}

export const localSamplingDefaults = { temperature: 0.8, topP: 0.95, topK: 40, minP: 0.05 } as const;
/** OpenAI's defaults, completing a client's partial choice. */
const openAiSamplingDefaults = { temperature: 1, topP: 1, topK: 0, minP: 0 } as const;

function unsupportedParameter(message: string, param: string): ApiError {
  return apiError('unsupported_parameter', message, { param });
}

function invalidValue(message: string, param: string): ApiError {
  return apiError('invalid_value', message, { param });
}

const numberOr = (value: unknown, fallback: number): number => (typeof value === 'number' ? value : fallback);

function readStop(stop: unknown): string[] {
  if (typeof stop === 'string') return stop.length > 0 ? [stop] : [];
  if (Array.isArray(stop)) return stop.filter((item): item is string => typeof item === 'string' && item.length > 0);
  return [];
}

function readLogitBias(value: unknown, vocabularySize: number): Array<[number, number]> {
  if (value === undefined || value === null) return [];
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw invalidValue("Invalid type for 'logit_bias': expected an object mapping token ids to numbers.", 'logit_bias');
  }
  const entries: Array<[number, number]> = [];
  for (const [key, bias] of Object.entries(value)) {
    const token = Number(key);
    if (!/^\d+$/.test(key) || token >= vocabularySize) {
      throw invalidValue(
        `Invalid 'logit_bias': '${key.slice(0, 32)}' is not a token id of this model (0 to ${vocabularySize - 1}).`,
        'logit_bias',
      );
    }
    if (typeof bias !== 'number' || !Number.isFinite(bias) || bias < -100 || bias > 100) {
      throw invalidValue(
        `Invalid 'logit_bias': the bias of token ${key} must be a number from -100 to 100.`,
        'logit_bias',
      );
    }
    entries.push([token, bias]);
  }
  return entries;
}

function readResponseFormat(value: unknown): ResponseFormat {
  if (value === undefined || value === null) return { type: 'text' };
  const format = value as { type?: unknown; json_schema?: { schema?: unknown } };
  if (format.type === 'json_object') return { type: 'json_object' };
  if (format.type === 'json_schema') {
    const schema = format.json_schema?.schema;
    if (schema === undefined || schema === null || typeof schema !== 'object') {
      throw invalidValue("Missing 'response_format.json_schema.schema': a JSON Schema object.", 'response_format');
    }
    return { type: 'json_schema', schema };
  }
  if (format.type === 'text') return { type: 'text' };
  throw invalidValue(
    `Invalid 'response_format.type': '${String(format.type)}'. Supported values are 'text', 'json_object' and 'json_schema'.`,
    'response_format.type',
  );
}

function toolsRequested(request: ChatCompletionRequest): boolean {
  const tools = request.tools ?? request.functions;
  if (!Array.isArray(tools) || tools.length === 0) return false;
  return request.tool_choice !== 'none' && request.function_call !== 'none';
}

export function readGenerationOptions(
  request: ChatCompletionRequest,
  context: { modelName: string; vocabularySize: number; defaultMaxTokens: number | undefined },
): GenerationOptions {
  if (typeof request.n === 'number' && request.n !== 1) {
    throw unsupportedParameter(
      `The model \`${context.modelName}\` generates one choice per request; 'n' must be 1.`,
      'n',
    );
  }
  if (request.logprobs === true || (typeof request.top_logprobs === 'number' && request.top_logprobs > 0)) {
    throw unsupportedParameter(`The model \`${context.modelName}\` does not return log probabilities.`, 'logprobs');
  }
  if (toolsRequested(request)) {
    throw unsupportedParameter(
      `The model \`${context.modelName}\` does not support tool calls; send the request without 'tools' (or with tool_choice 'none').`,
      'tools',
    );
  }
  const requestedMax = request.max_completion_tokens ?? request.max_tokens ?? undefined;
  const seed = typeof request.seed === 'number' ? request.seed : undefined;
  const clientChoseSampling = typeof request.temperature === 'number' || typeof request.top_p === 'number';
  const sampling = clientChoseSampling ? openAiSamplingDefaults : localSamplingDefaults;
  return {
    temperature: samplingTemperature(numberOr(request.temperature, sampling.temperature)),
    topP: numberOr(request.top_p, sampling.topP),
    topK: sampling.topK,
    minP: sampling.minP,
    // llama.cpp takes a 32-bit seed; OpenAI's is int64, so larger seeds are folded, keeping them reproducible.
    seed: seed === undefined ? undefined : Math.abs(seed) % 2 ** 32,
    maxTokens: typeof requestedMax === 'number' ? requestedMax : context.defaultMaxTokens,
    stop: readStop(request.stop),
    frequencyPenalty: numberOr(request.frequency_penalty, 0),
    presencePenalty: numberOr(request.presence_penalty, 0),
    logitBias: readLogitBias(request.logit_bias, context.vocabularySize),
    responseFormat: readResponseFormat(request.response_format),
  };
}
