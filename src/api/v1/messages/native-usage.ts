import type { ApiError } from '../../../errors/api-error.js';
import { topLevelMembers, withMemberValue } from '../../../json/json-bytes.js';
import { convertUsage, hasBelievableAnthropicCounts } from '../../../providers/anthropic/convert-usage.js';
import { anthropicStreamError } from '../../../providers/anthropic/parse-error.js';
import type { AnthropicUsage } from '../../../providers/anthropic/wire-types.js';
import { malformed, parseJsonObject } from '../../../providers/http.js';
import { type SseEvent, sseEvent } from '../../../upstream/sse.js';
import { estimateTokens, readUsage, type TokenUsage } from '../../../usage/usage.js';

/**
 * Usage of a passed-through Anthropic answer, for the log and the cost, while the answer itself goes to the client
 * untouched. A JSON answer's `usage` is found without parsing the rest; a stream is relayed event by event, each
 * checked to be the JSON object its name says, reading `message_start` (its usage: input and cache tokens) and
 * `message_delta` (cumulative usage, output tokens) and noting an `error` event or a missing `message_stop`, so the
 * log says how the stream ended.
 */

function usageOf(anthropic: AnthropicUsage): TokenUsage | undefined {
  if (typeof anthropic.input_tokens !== 'number' && typeof anthropic.output_tokens !== 'number') return undefined;
  return readUsage(convertUsage(anthropic));
}

/**
 * A forwarded Messages JSON answer, checked in outline before it goes to the client untouched: one JSON object of
 * `type` "message" with a `content` array. Anything else with a 2xx (an error body, an event stream, an empty or cut
 * body) is the upstream's error or a malformed answer, never relayed as if it were a message.
 */
export function checkedNativeMessage(providerName: string, body: Buffer): Buffer {
  const members = topLevelMembers(body);
  if (!members) throw malformed(providerName, 'a message that is not a JSON object');
  const type = members.find((member) => member.name === 'type');
  const typeName = type ? jsonValueAt(body, type.valueStart, type.valueEnd) : undefined;
  if (typeName === 'error') throw anthropicStreamError(providerName, parseJsonObject(providerName, body.toString()));
  if (typeName !== 'message') throw malformed(providerName, 'a message whose type is not "message"');
  const content = members.find((member) => member.name === 'content');
  if (!content || body[content.valueStart] !== 0x5b) throw malformed(providerName, 'a message without content');
  return body;
}

function jsonValueAt(body: Buffer, start: number, end: number): unknown {
  try {
    return JSON.parse(body.toString('utf8', start, end));
  } catch {
    return undefined;
  }
}

/** The usage of a Messages JSON answer; undefined when it has none (the caller estimates). */
export function nativeMessageUsage(body: Buffer): TokenUsage | undefined {
  const usage = topLevelMembers(body)?.find((member) => member.name === 'usage');
  if (!usage) return undefined;
  try {
    const value: unknown = JSON.parse(body.toString('utf8', usage.valueStart, usage.valueEnd));
    return value !== null && typeof value === 'object' ? usageOf(value as AnthropicUsage) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A Messages JSON answer with its `usage` replaced by `usage`: the bytes as they came when it has none (a pass-through
 * adds nothing the upstream did not send) or names it twice.
 */
export function withMessageUsage(body: Buffer, usage: object): Buffer {
  return withMemberValue(body, 'usage', JSON.stringify(usage)) ?? body;
}

export interface NativeStreamRelay {
  /** The event as the client gets it: the upstream's event, framed as Anthropic frames it. */
  relay(event: SseEvent): string;
  /**
   * The usage so far (input from message_start, output and any update from message_delta); undefined when there is
   * none, or when a count was not believable (the caller estimates, as the client was shown).
   */
  usage(): TokenUsage | undefined;
  /** Characters generated so far (text, thinking, tool input), for an estimate. */
  readonly generatedCharacters: number;
  /** An `error` event the upstream sent, as the gateway's error (the client got the event itself). */
  readonly error: ApiError | undefined;
  /** Whether `message_stop` arrived: a stream that ends without it was cut short. */
  readonly completed: boolean;
}

/**
 * `estimate` gives, for the characters generated so far, the usage the client is shown in place of counts that are
 * not believable (a negative input_tokens): from the first such count on, every usage the stream carries is the
 * estimate, so the client and the log agree.
 */
export function createNativeStreamRelay(
  providerName: string,
  estimate: (generatedCharacters: number) => object,
): NativeStreamRelay {
  const counts: AnthropicUsage = {};
  const merge = (value: object) => {
    for (const [key, count] of Object.entries(value as Record<string, unknown>)) {
      if (typeof count === 'number') (counts as Record<string, number>)[key] = count;
    }
  };
  let unbelievable = false;
  let generatedCharacters = 0;
  /** Reads the `usage` of an event's part; replaces it with the estimate when it cannot be believed (true then). */
  const readUsageOf = (holder: unknown): boolean => {
    if (holder === null || typeof holder !== 'object') return false;
    const part = holder as { usage?: unknown };
    if (part.usage === undefined || part.usage === null) return false;
    if (!unbelievable && typeof part.usage === 'object' && hasBelievableAnthropicCounts(part.usage)) {
      merge(part.usage);
      return false;
    }
    unbelievable = true;
    part.usage = estimate(generatedCharacters);
    return true;
  };
  let error: ApiError | undefined;
  let completed = false;
  // Anthropic reports the output tokens in message_delta, at the end: a stream the client leaves (or the upstream cuts)
  // before it is charged for the text it did send, estimated from the deltas, so leaving early cannot dodge a budget.
  let finalUsageSeen = false;
  return {
    relay(event) {
      // Clients parse every event and dispatch on its name, which Anthropic repeats as the data's `type`: an event
      // that is not a JSON object, or is named otherwise, cannot go to them as it came.
      const data = parseJsonObject(providerName, event.data, 'stream data');
      const type = data.type;
      if (typeof type !== 'string' || (event.event !== undefined && event.event !== type)) {
        throw malformed(
          providerName,
          `a stream event named ${JSON.stringify(event.event ?? null)} whose type is ${JSON.stringify(type ?? null)}`.slice(
            0,
            300,
          ),
        );
      }
      let changed = false;
      switch (type) {
        case 'message_start':
          changed = readUsageOf(data.message);
          break;
        case 'content_block_delta':
          generatedCharacters += deltaCharacters(data.delta);
          break;
        case 'message_delta':
          changed = readUsageOf(data);
          finalUsageSeen = typeof (data.usage as { output_tokens?: unknown } | null)?.output_tokens === 'number';
          break;
        case 'message_stop':
          completed = true;
          break;
        case 'error':
          error = anthropicStreamError(providerName, data);
          break;
      }
      return sseEvent(type, changed ? JSON.stringify(data) : event.data);
    },
    get generatedCharacters() {
      return generatedCharacters;
    },
    usage: () => {
      if (unbelievable) return undefined;
      const reported = usageOf(counts);
      if (finalUsageSeen || generatedCharacters === 0) return reported;
      const estimatedOutput = estimateTokens(generatedCharacters);
      if (reported && reported.completionTokens >= estimatedOutput) return reported;
      const promptTokens = reported?.promptTokens ?? 0;
      return {
        promptTokens,
        completionTokens: estimatedOutput,
        totalTokens: promptTokens + estimatedOutput,
        cachedTokens: reported?.cachedTokens ?? 0,
        cacheWriteTokens: reported?.cacheWriteTokens ?? 0,
        reasoningTokens: 0,
        estimated: true,
      };
    },
    get error() {
      return error;
    },
    get completed() {
      return completed;
    },
  };
}

/** The characters a content_block_delta adds: text, a tool call's JSON, or thinking. */
function deltaCharacters(delta: unknown): number {
  if (!delta || typeof delta !== 'object') return 0;
  const { text, partial_json: partialJson, thinking } = delta as Record<string, unknown>;
  let characters = 0;
  for (const part of [text, partialJson, thinking]) if (typeof part === 'string') characters += part.length;
  return characters;
}
