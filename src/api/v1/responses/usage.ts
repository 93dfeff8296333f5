import type { Usage } from '../../../openai/types.js';
import { hasBelievableCounts } from '../../../usage/usage.js';
import type { ResponsesRequest, ResponseUsage } from './types.js';

/** Token counts between chat names (what every adapter reports) and Responses names (what the client reads). */

const count = (value: unknown): number =>
  typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0;

export function toResponseUsage(usage: Usage): ResponseUsage {
  const input = count(usage.prompt_tokens);
  const output = count(usage.completion_tokens);
  const inputDetails: ResponseUsage['input_tokens_details'] = {
    cached_tokens: count(usage.prompt_tokens_details?.cached_tokens),
  };
  const cacheWrite = count(usage.prompt_tokens_details?.cache_write_tokens);
  if (cacheWrite > 0) inputDetails.cache_write_tokens = cacheWrite;
  return {
    input_tokens: input,
    input_tokens_details: inputDetails,
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: count(usage.completion_tokens_details?.reasoning_tokens) },
    total_tokens: count(usage.total_tokens) || input + output,
  };
}

/**
 * A Responses `usage` object (from a native upstream) in chat names, for the log and limits; undefined if unusable (no
 * count, or one that is not a believable count).
 */
export function fromResponseUsage(usage: unknown): Usage | undefined {
  if (!usage || typeof usage !== 'object') return undefined;
  const value = usage as {
    input_tokens?: unknown;
    output_tokens?: unknown;
    total_tokens?: unknown;
    input_tokens_details?: { cached_tokens?: unknown; cache_write_tokens?: unknown } | null;
    output_tokens_details?: { reasoning_tokens?: unknown } | null;
  };
  if (typeof value.input_tokens !== 'number' && typeof value.output_tokens !== 'number') return undefined;
  if (!hasBelievableCounts(value)) return undefined;
  const prompt = count(value.input_tokens);
  const completion = count(value.output_tokens);
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: count(value.total_tokens) || prompt + completion,
    prompt_tokens_details: {
      cached_tokens: count(value.input_tokens_details?.cached_tokens),
      cache_write_tokens: count(value.input_tokens_details?.cache_write_tokens),
    },
    completion_tokens_details: { reasoning_tokens: count(value.output_tokens_details?.reasoning_tokens) },
  };
}

/** The characters of the request's text, for the reservation and estimates of usage (like chat's). */
export function inputCharacters(request: ResponsesRequest): number {
  let characters = typeof request.instructions === 'string' ? request.instructions.length : 0;
  const input = request.input;
  if (typeof input === 'string') return characters + input.length;
  if (!Array.isArray(input)) return characters;
  for (const item of input) {
    characters += 4;
    const record = item as Record<string, unknown>;
    for (const field of ['content', 'output', 'arguments']) {
      const value = record[field];
      if (typeof value === 'string') characters += value.length;
      else if (Array.isArray(value)) {
        for (const part of value) {
          const text = (part as { text?: unknown } | null)?.text;
          if (typeof text === 'string') characters += text.length;
        }
      }
    }
  }
  return characters;
}

/** The characters a response object generated (text, refusals, reasoning summaries, tool-call arguments). */
export function outputCharacters(response: Record<string, unknown>): number {
  let characters = 0;
  if (!Array.isArray(response.output)) return 0;
  for (const item of response.output as unknown[]) {
    if (item === null || typeof item !== 'object') continue;
    const record = item as Record<string, unknown>;
    if (typeof record.arguments === 'string') characters += record.arguments.length;
    for (const field of ['content', 'summary']) {
      const parts = record[field];
      if (!Array.isArray(parts)) continue;
      for (const part of parts) {
        const { text, refusal } = (part ?? {}) as { text?: unknown; refusal?: unknown };
        if (typeof text === 'string') characters += text.length;
        if (typeof refusal === 'string') characters += refusal.length;
      }
    }
  }
  return characters;
}
