import type { ApiError } from '../../../errors/api-error.js';
import { topLevelMembers } from '../../../json/json-bytes.js';
import { convertUsage } from '../../../providers/anthropic/convert-usage.js';
import { anthropicStreamError } from '../../../providers/anthropic/parse-error.js';
import type { AnthropicUsage } from '../../../providers/anthropic/wire-types.js';
import { parseJsonObject } from '../../../providers/http.js';
import { type SseEvent, sseEvent } from '../../../upstream/sse.js';
import { readUsage, type TokenUsage } from '../../../usage/usage.js';

/**
 * Usage of a passed-through Anthropic answer, for the log and the cost, while the answer itself goes to the client
 * untouched. A JSON answer's `usage` is found without parsing the rest; a stream is relayed event by event, parsing
 * only `message_start` (its usage: input and cache tokens) and `message_delta` (cumulative usage, output tokens) and
 * noting an `error` event or a missing `message_stop`, so the log says how the stream ended.
 */

function usageOf(anthropic: AnthropicUsage): TokenUsage | undefined {
  if (typeof anthropic.input_tokens !== 'number' && typeof anthropic.output_tokens !== 'number') return undefined;
  return readUsage(convertUsage(anthropic));
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

export interface NativeStreamRelay {
  /** The event as the client gets it: the upstream's event, framed as Anthropic frames it. */
  relay(event: SseEvent): string;
  /** The usage so far (input from message_start, output and any update from message_delta). */
  usage(): TokenUsage | undefined;
  /** An `error` event the upstream sent, as the gateway's error (the client got the event itself). */
  readonly error: ApiError | undefined;
  /** Whether `message_stop` arrived: a stream that ends without it was cut short. */
  readonly completed: boolean;
}

export function createNativeStreamRelay(providerName: string): NativeStreamRelay {
  const counts: AnthropicUsage = {};
  const merge = (value: unknown) => {
    if (!value || typeof value !== 'object') return;
    for (const [key, count] of Object.entries(value as Record<string, unknown>)) {
      if (typeof count === 'number') (counts as Record<string, number>)[key] = count;
    }
  };
  let error: ApiError | undefined;
  let completed = false;
  return {
    relay(event) {
      switch (event.event) {
        case 'message_start':
          merge((parseJsonObject(providerName, event.data, 'stream data').message as { usage?: unknown })?.usage);
          break;
        case 'message_delta':
          merge(parseJsonObject(providerName, event.data, 'stream data').usage);
          break;
        case 'message_stop':
          completed = true;
          break;
        case 'error':
          error = anthropicStreamError(providerName, parseJsonObject(providerName, event.data, 'stream data'));
          break;
      }
      return sseEvent(event.event, event.data);
    },
    usage: () => usageOf(counts),
    get error() {
      return error;
    },
    get completed() {
      return completed;
    },
  };
}
