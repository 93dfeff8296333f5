import type { ModelPricing } from '../config/schema.js';
import type { ChatCompletionRequest, Usage } from '../openai/types.js';

/**
 * Token counts as the request log keeps them. Cached (read from a prompt cache) and cache-write tokens are part of
 * prompt; reasoning tokens part of completion.
 */
export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  cachedTokens: number;
  /** Prompt tokens written to the provider's prompt cache (Anthropic bills them above the input price). */
  cacheWriteTokens: number;
  reasoningTokens: number;
  /** True when the upstream reported nothing and these are estimates; never reported as 0. */
  estimated: boolean;
}

/** Token counts as the log stores them: within a 32-bit column whatever an upstream says. */
const nonNegative = (value: unknown): number =>
  typeof value === 'number' && value > 0 ? Math.min(value, 2_147_483_647) : 0;

/**
 * Whether a count an upstream reported can be believed: absent (undefined or null), or a whole number not below zero.
 * A negative, fractional, huge or non-numeric count says the upstream's accounting is broken, and clamping it would
 * log a made-up figure as reported: its usage is treated as unknown (estimated, and marked so) instead.
 */
export function isTokenCount(value: unknown): boolean {
  return value === undefined || value === null || (Number.isSafeInteger(value) && (value as number) >= 0);
}

/** Whether every count of an object (its own members named in `names`) is absent or a believable count. */
export function hasTokenCounts(object: unknown, names: readonly string[]): boolean {
  if (object === undefined || object === null) return true;
  if (typeof object !== 'object' || Array.isArray(object)) return false;
  for (const name of names) if (!isTokenCount((object as Record<string, unknown>)[name])) return false;
  return true;
}

/**
 * Whether every count of a usage object can be believed: its members named `…tokens`, and those of its `…_details`
 * objects (OpenAI's, Responses' and Anthropic's names alike), the ones the gateway does not read included, since the
 * client is shown them all.
 */
export function hasBelievableCounts(usage: object): boolean {
  for (const [name, value] of Object.entries(usage)) {
    if (name.endsWith('tokens')) {
      if (!isTokenCount(value)) return false;
    } else if (name.endsWith('_details') && value !== null && value !== undefined) {
      if (typeof value !== 'object' || Array.isArray(value)) return false;
      for (const [detail, count] of Object.entries(value)) {
        if (detail.endsWith('tokens') && !isTokenCount(count)) return false;
      }
    }
  }
  return true;
}

/**
 * Reads an OpenAI `usage` object (chat's, or embeddings' without completion tokens); undefined when unusable: no
 * count at all, or one that is not a believable count (isTokenCount).
 */
export function readUsage(usage: Partial<Usage> | null | undefined): TokenUsage | undefined {
  if (!usage || typeof usage !== 'object') return undefined;
  if (typeof usage.prompt_tokens !== 'number' && typeof usage.completion_tokens !== 'number') return undefined;
  if (!hasBelievableCounts(usage)) return undefined;
  const promptTokens = nonNegative(usage.prompt_tokens);
  const completionTokens = nonNegative(usage.completion_tokens);
  return {
    promptTokens,
    completionTokens,
    totalTokens: nonNegative(usage.total_tokens) || promptTokens + completionTokens,
    cachedTokens: nonNegative(usage.prompt_tokens_details?.cached_tokens),
    cacheWriteTokens: nonNegative(usage.prompt_tokens_details?.cache_write_tokens),
    reasoningTokens: nonNegative(usage.completion_tokens_details?.reasoning_tokens),
    estimated: false,
  };
}

/** The OpenAI wire form of token counts (for usage we synthesize, e.g. estimates). */
export function toWireUsage(usage: TokenUsage): Usage {
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.totalTokens,
    prompt_tokens_details: { cached_tokens: usage.cachedTokens, cache_write_tokens: usage.cacheWriteTokens },
    completion_tokens_details: { reasoning_tokens: usage.reasoningTokens },
  };
}

/** Roughly four characters per token for English text and code: good enough for a marked estimate. */
export function estimateTokens(characters: number): number {
  return Math.max(1, Math.ceil(characters / 4));
}

function contentLength(content: unknown): number {
  if (typeof content === 'string') return content.length;
  if (Array.isArray(content)) {
    let total = 0;
    for (const part of content) {
      if (part && typeof part === 'object' && typeof (part as { text?: unknown }).text === 'string') {
        total += (part as { text: string }).text.length;
      } else {
        // Images, audio and files: a flat allowance rather than zero.
        total += 340;
      }
    }
    return total;
  }
  return 0;
}

/** Estimates the prompt size of a request: message text, tool-call arguments and tool definitions. */
export function estimatePromptCharacters(request: ChatCompletionRequest): number {
  let characters = 0;
  for (const message of request.messages) {
    characters += 4 + contentLength(message.content);
    for (const call of message.tool_calls ?? [])
      characters += call.function.name.length + call.function.arguments.length;
  }
  if (Array.isArray(request.tools)) characters += JSON.stringify(request.tools).length;
  return characters;
}

export function estimateUsage(promptCharacters: number, completionCharacters: number): TokenUsage {
  const completionTokens = completionCharacters > 0 ? estimateTokens(completionCharacters) : 0;
  return estimatedUsage(estimateTokens(promptCharacters), completionTokens);
}

/** Usage in plain prompt and completion tokens, marked as an estimate (nothing cached, no reasoning counted). */
export function estimatedUsage(promptTokens: number, completionTokens: number): TokenUsage {
  return {
    promptTokens,
    completionTokens,
    totalTokens: promptTokens + completionTokens,
    cachedTokens: 0,
    cacheWriteTokens: 0,
    reasoningTokens: 0,
    estimated: true,
  };
}

/**
 * Cost in US dollars. Cached prompt tokens, cache writes and reasoning tokens are priced separately (they are
 * included in prompt_tokens and completion_tokens respectively, so they are subtracted from the base counts first).
 */
export function costOf(usage: TokenUsage, pricing: ModelPricing | undefined): number | null {
  if (!pricing) return null;
  const cached = Math.min(usage.cachedTokens, usage.promptTokens);
  const cacheWrite = Math.min(usage.cacheWriteTokens, usage.promptTokens - cached);
  const reasoning = Math.min(usage.reasoningTokens, usage.completionTokens);
  const dollars =
    (usage.promptTokens - cached - cacheWrite) * pricing.inputPerMillion +
    cached * pricing.cachedInputPerMillion +
    cacheWrite * pricing.cacheWritePerMillion +
    (usage.completionTokens - reasoning) * pricing.outputPerMillion +
    reasoning * pricing.reasoningPerMillion;
  return toTwelveDigits(dollars / 1_000_000);
}

/**
 * The value rounded to 12 significant digits: drops binary floating-point noise (0.30000000000000004 -> 0.3) without
 * losing micro-cent amounts. Scaled to a 12-digit integer, rounded and scaled back (both factors exact powers of ten,
 * so the division gives the double nearest the 12-digit decimal, as parsing it would); `Number(x.toPrecision(12))`
 * gives the same but formats and parses a string, on every request.
 */
export function toTwelveDigits(value: number): number {
  if (value === 0 || !Number.isFinite(value)) return value;
  const exponent = 11 - Math.floor(Math.log10(Math.abs(value)));
  // Powers of ten are exact doubles up to 1e22; outside that range (never a price), the string round trip.
  if (exponent < 0 || exponent > 22) return Number(value.toPrecision(12));
  const scale = 10 ** exponent;
  return Math.round(value * scale) / scale;
}
