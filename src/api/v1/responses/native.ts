import type { Usage } from '../../../openai/types.js';
import { malformed } from '../../../providers/http.js';
import { errorInsideSuccess } from '../../../providers/openai/parse-error.js';
import type { SseEvent } from '../../../upstream/sse.js';
import type { ResponsesRequest } from './types.js';
import { fromResponseUsage } from './usage.js';

/**
 * For upstreams that speak the Responses API themselves (`responses_api: native`): the client's body is forwarded with
 * only `model` changed, so reasoning items, `encrypted_content` and item types the gateway does not know pass through
 * untouched; the answer's usage is read (in chat names, for the log, limits and cost) from the JSON response or from
 * the stream's terminal event (`response.completed`, `response.incomplete` or `response.failed`), without parsing the
 * other events.
 */

/**
 * The upstream body: the client's bytes when they already name the upstream model (and `body` was read as
 * forwardable, see server/read-body.ts), otherwise the request with its `model` replaced (its place kept).
 */
export function nativeRequestBody(request: ResponsesRequest, upstreamModel: string, body?: Buffer): string | Buffer {
  if (body && request.model === upstreamModel) return body;
  return JSON.stringify({ ...request, model: upstreamModel });
}

/**
 * A native JSON answer, checked before it goes to the client untouched: a response object (`object: "response"` and
 * an `output` list). An `error` body with a 2xx is the upstream's error; anything else is malformed, never relayed as
 * if it were a response.
 */
export function checkedNativeResponse(providerName: string, object: Record<string, unknown>): Record<string, unknown> {
  if (object.object === 'response' && Array.isArray(object.output)) return object;
  if (object.error !== null && typeof object.error === 'object') throw errorInsideSuccess(providerName, object);
  throw malformed(providerName, 'a response that is not a response object (no "object": "response" with an output)');
}

/** The usage of a native JSON answer (a response object); undefined when it reports none. */
export function nativeUsage(response: unknown): Usage | undefined {
  if (!response || typeof response !== 'object') return undefined;
  return fromResponseUsage((response as { usage?: unknown }).usage);
}

export const terminalTypes: ReadonlySet<string> = new Set([
  'response.completed',
  'response.incomplete',
  'response.failed',
]);

export type NativeOutcome = 'completed' | 'incomplete' | 'failed';

export interface NativeStreamReader {
  /** Reads one upstream event; only a terminal event is parsed. */
  push(event: SseEvent): void;
  usage(): Usage | undefined;
  /** How the stream ended, once its terminal event came; undefined for a stream cut short. */
  outcome(): NativeOutcome | undefined;
  /** The response object of the terminal event (what the gateway stores); undefined before it. */
  response(): Record<string, unknown> | undefined;
}

function terminalTypeOf(event: SseEvent): string | undefined {
  if (event.event !== undefined) return terminalTypes.has(event.event) ? event.event : undefined;
  // Without an event line the type is inside the JSON; most events are deltas and need no parse.
  const data = event.data;
  if (
    !data.includes('"response.completed"') &&
    !data.includes('"response.incomplete"') &&
    !data.includes('"response.failed"')
  ) {
    return undefined;
  }
  return '';
}

export function createNativeStreamReader(): NativeStreamReader {
  let usage: Usage | undefined;
  let outcome: NativeOutcome | undefined;
  let final: Record<string, unknown> | undefined;
  return {
    push(event) {
      const named = terminalTypeOf(event);
      if (named === undefined) return;
      let value: { type?: unknown; response?: { usage?: unknown } & Record<string, unknown> };
      try {
        value = JSON.parse(event.data);
      } catch {
        return;
      }
      const type = typeof value?.type === 'string' ? value.type : named;
      if (!terminalTypes.has(type)) return;
      outcome = type.slice('response.'.length) as NativeOutcome;
      usage = fromResponseUsage(value.response?.usage) ?? usage;
      if (value.response && typeof value.response === 'object') final = value.response;
    },
    usage: () => usage,
    outcome: () => outcome,
    response: () => final,
  };
}
