import { type ApiError, apiError, toApiError } from '../../../errors/api-error.js';
import { malformed } from '../../../providers/http.js';
import type { UpstreamResponse } from '../../../upstream/client.js';
import { type SseEvent, sseDone, sseEvent } from '../../../upstream/sse.js';
import { estimateUsage, readUsage, type TokenUsage, toWireUsage } from '../../../usage/usage.js';
import type { Exchange, Outcome } from '../pipeline/endpoint.js';
import type { SseResponse } from '../pipeline/sse-response.js';
import { newResponseId } from './ids.js';
import { createNativeStreamReader, terminalTypes } from './native.js';
import { createNativeOutputCollector } from './native-output.js';
import { beginStoring, type Storing, saveResponse, showItem } from './state.js';
import type { ResponseObject } from './types.js';
import { fromResponseUsage, toResponseUsage } from './usage.js';

/**
 * A native upstream's Responses stream relayed event by event (each re-framed whole, its `event:` line kept), its
 * terminal event read for usage and for the stored response. The events are numbered for the client from 0 without
 * gaps (the contract's increasing `sequence_number`), the upstream's own numbers kept only where they agree. The `store`
 * of every event's response (created, in progress, terminal) says what the gateway does with it, whatever the upstream
 * said of its own storage. A stream that breaks, or ends without a terminal event, gets the gateway's own `error` and
 * `response.failed` events, numbered after the last one relayed.
 *
 * A response the gateway stores is shown under the gateway's own id (`resp_` and the time of its first event, as a
 * translated stream's) in every event's response, not the upstream's: another node asked for it before this node's
 * batch is written can tell from the id that it may not be written yet, and waits for it instead of answering 404. The
 * upstream's id is needed nowhere: a continuation is resolved by the gateway (its history sent as input).
 */

export async function relayNativeStream(
  upstream: UpstreamResponse,
  sse: SseResponse,
  storing: Storing | undefined,
  exchange: Exchange,
  onFailure: (error: unknown) => void,
  /** The prompt's size, for an estimate of usage the upstream does not report (or reports unbelievably). */
  promptCharacters: number,
): Promise<Outcome> {
  const reader = createNativeStreamReader();
  // What the client has been given of the output, for a stream that breaks before the terminal event carries it.
  const collected = createNativeOutputCollector();
  const provider = exchange.trace.served?.provider ?? 'upstream';
  // The sequence_number of the next event the client gets.
  let nextSequence = 0;
  let firstTokenAt: number | undefined;
  let created: Record<string, unknown> | undefined;
  let createdId: string | undefined;
  // The gateway's id for a response it stores, named at the first event that shows the client a response.
  let storedId: string | undefined;
  let saved = false;
  let generatedCharacters = 0;
  // Set when the upstream's usage could not be believed and the client was shown this estimate instead.
  let shownEstimate: TokenUsage | undefined;
  const estimate = () => estimateUsage(promptCharacters, generatedCharacters);
  try {
    for await (const upstreamEvent of upstream.events()) {
      if (upstreamEvent.data === '[DONE]') continue;
      let event = upstreamEvent;
      const { type: name, data } = checkedEvent(provider, event);
      let changed = false;
      // The client sees 0, 1, 2, … whatever the upstream numbered (gaps, repeats, none, going backwards).
      if (data.sequence_number !== nextSequence) {
        data.sequence_number = nextSequence;
        changed = true;
      }
      nextSequence++;
      // Audio deltas are base64, not text: they would count several times what they cost.
      if (name.endsWith('.delta') && name !== 'response.audio.delta' && typeof data.delta === 'string') {
        generatedCharacters += data.delta.length;
      }
      const response = responseIn(data);
      if (storing && response) {
        storedId ??= newResponseId();
        if (response.id !== storedId) {
          response.id = storedId;
          changed = true;
        }
      }
      // Stored unless the client said not to; one grown too large is not (set below).
      const store = storing !== undefined;
      if (response && response.store !== store) {
        response.store = store;
        changed = true;
      }
      if (terminalTypes.has(name) && unbelievableUsage(data.response)) {
        shownEstimate = estimate();
        (data.response as { usage: unknown }).usage = toResponseUsage(toWireUsage(shownEstimate));
        changed = true;
      }
      if (changed) event = { ...event, data: JSON.stringify(data) };
      reader.push(event);
      collected.push(name, data);
      if (created === undefined && name === 'response.created') {
        created = response;
        createdId = typeof created?.id === 'string' ? created.id : undefined;
        // From here the client knows the id: retrieval and deletion find the response while it streams.
        if (storing && createdId) {
          beginStoring(storing, inProgress(created, []), () => inProgress(created, collected.output()));
        }
      }
      if (storing && createdId && name === 'response.output_item.added') showItem(storing, createdId, data.item);
      if (firstTokenAt === undefined && event.data.includes('.delta"')) firstTokenAt = performance.now();
      const final = reader.outcome() !== undefined ? reader.response() : undefined;
      if (storing && final && typeof final.id === 'string') {
        // Stored before the client has it when the stream outlasted the time another node waits for a young id.
        const stored = saveResponse(storing, final as ResponseObject, exchange).stored;
        if (!stored && data.response !== null && typeof data.response === 'object') {
          // Grown too large to store: the terminal event's response says so.
          (data.response as Record<string, unknown>).store = false;
          event = { ...event, data: JSON.stringify(data) };
        }
        saved = true;
        await storing.store.writeBeforeAnswering(final.id);
      }
      await sse.write(sseEvent(name, event.data));
      // The terminal event ends the response: whatever an upstream sends after it is not relayed.
      if (reader.outcome() !== undefined) break;
    }
    if (reader.outcome() === undefined) {
      throw apiError('upstream_malformed_response', `The upstream provider "${provider}" ended the stream early.`);
    }
    await sse.write(sseDone);
    sse.end();
    const final = reader.response();
    // The upstream's own response.failed ends the stream properly, but the request failed: the log says so.
    const error = reader.outcome() === 'failed' ? upstreamFailed(final, provider) : undefined;
    const usage = shownEstimate ?? readUsage(reader.usage()) ?? estimate();
    return { error, usage, firstTokenAt, responseBody: sse.body() };
  } catch (error) {
    const failure = toApiError(error);
    onFailure(failure);
    if (!sse.closed) {
      const code = failure.code ?? 'server_error';
      const failed = failedResponse(created, code, failure.message, collected.output());
      const errorEvent = { type: 'error', sequence_number: nextSequence, code, message: failure.message };
      const failedEvent = { type: 'response.failed', sequence_number: nextSequence + 1, response: failed };
      await sse.write(
        sseEvent('error', JSON.stringify(errorEvent)) +
          sseEvent('response.failed', JSON.stringify(failedEvent)) +
          sseDone,
      );
    }
    sse.end();
    // A broken stream is stored as failed, with the output the client had, like a translated one.
    if (storing && !saved && createdId) {
      const failed = failedResponse(created, failure.code ?? 'server_error', failure.message, collected.output());
      saveResponse(storing, failed, exchange);
    }
    // Tokens were spent only if something was generated.
    const usage = shownEstimate ?? readUsage(reader.usage()) ?? (generatedCharacters > 0 ? estimate() : undefined);
    return { error: failure, usage, firstTokenAt, responseBody: sse.body() };
  } finally {
    if (storing && createdId) storing.store.end(createdId);
  }
}

/** The response object an event carries (created, in progress, terminal); undefined for any other event. */
function responseIn(data: Record<string, unknown>): Record<string, unknown> | undefined {
  const response = data.response;
  return response !== null && typeof response === 'object' && !Array.isArray(response)
    ? (response as Record<string, unknown>)
    : undefined;
}

function inProgress(created: Record<string, unknown> | undefined, output: unknown[]): ResponseObject {
  return { ...(created ?? {}), status: 'in_progress', output } as unknown as ResponseObject;
}

function failedResponse(
  created: Record<string, unknown> | undefined,
  code: string,
  message: string,
  output: unknown[],
): ResponseObject {
  return { ...(created ?? {}), status: 'failed', error: { code, message }, output } as unknown as ResponseObject;
}

/**
 * The event's data and the name it goes to the client under: its `type`, which its data must carry as a JSON object
 * (the Responses clients dispatch on it), and which its `event:` line, when there is one, must repeat. Anything else
 * cannot be relayed as a Responses event: the stream fails as malformed.
 */
function checkedEvent(provider: string, event: SseEvent): { type: string; data: Record<string, unknown> } {
  let data: unknown;
  try {
    data = JSON.parse(event.data);
  } catch {
    throw malformed(provider, 'stream data that is not JSON');
  }
  const type = data !== null && typeof data === 'object' ? (data as { type?: unknown }).type : undefined;
  if (typeof type !== 'string' || type === '') throw malformed(provider, 'a stream event without a type');
  if (event.event !== undefined && event.event !== type) {
    throw malformed(
      provider,
      `a stream event named "${event.event.slice(0, 100)}" whose type is "${type.slice(0, 100)}"`,
    );
  }
  return { type, data: data as Record<string, unknown> };
}

/** Whether a terminal event's response reports usage that cannot be believed (a negative count, a string). */
function unbelievableUsage(response: unknown): boolean {
  if (response === null || typeof response !== 'object') return false;
  const usage = (response as { usage?: unknown }).usage;
  return usage !== undefined && usage !== null && fromResponseUsage(usage) === undefined;
}

function upstreamFailed(response: Record<string, unknown> | undefined, provider: string): ApiError {
  const reported = response?.error as { message?: unknown } | null | undefined;
  const message = typeof reported?.message === 'string' ? reported.message : 'the response failed';
  return apiError('upstream_error', `The upstream provider "${provider}" reported: ${message.slice(0, 500)}`);
}
