import { type ApiError, apiError, toApiError } from '../../../errors/api-error.js';
import { malformed } from '../../../providers/http.js';
import type { UpstreamResponse } from '../../../upstream/client.js';
import { type SseEvent, sseDone, sseEvent } from '../../../upstream/sse.js';
import { estimateUsage, readUsage, type TokenUsage } from '../../../usage/usage.js';
import type { Exchange, Outcome } from '../pipeline/endpoint.js';
import type { SseResponse } from '../pipeline/sse-response.js';
import { createNativeStreamReader } from './native.js';
import { type Storing, saveResponse } from './state.js';
import type { ResponseObject } from './types.js';

/**
 * A native upstream's Responses stream relayed event by event (each re-framed whole, its `event:` line kept), its
 * terminal event read for usage and for the stored response. A stream that breaks, or ends without a terminal event,
 * gets the gateway's own `error` and `response.failed` events, numbered after the last one relayed. Such a stream (or
 * one its client left) has no usage from the upstream: it is estimated from the deltas relayed, so that leaving a
 * stream early cannot dodge a budget.
 */

const sequencePattern = /"sequence_number":(\d+)/;

export async function relayNativeStream(
  upstream: UpstreamResponse,
  sse: SseResponse,
  storing: Storing | undefined,
  exchange: Exchange,
  onFailure: (error: unknown) => void,
  promptCharacters: number,
): Promise<Outcome> {
  const reader = createNativeStreamReader();
  let generatedCharacters = 0;
  // The upstream's usage, else the estimate from what was relayed.
  const usageOf = (reported: Parameters<typeof readUsage>[0]): TokenUsage | undefined =>
    readUsage(reported) ?? (generatedCharacters > 0 ? estimateUsage(promptCharacters, generatedCharacters) : undefined);
  const provider = exchange.trace.served?.provider ?? 'upstream';
  let lastSequence = -1;
  let firstTokenAt: number | undefined;
  let created: Record<string, unknown> | undefined;
  let createdId: string | undefined;
  let saved = false;
  try {
    for await (const event of upstream.events()) {
      if (event.data === '[DONE]') continue;
      const { name, delta } = checkedEvent(provider, event);
      generatedCharacters += delta;
      reader.push(event);
      const sequence = sequencePattern.exec(event.data);
      if (sequence) lastSequence = Number(sequence[1]);
      if (created === undefined && event.data.includes('"response.created"')) {
        created = responseOf(event.data);
        createdId = typeof created?.id === 'string' ? created.id : undefined;
        // From here the client knows the id: retrieval and deletion find the response while it streams.
        if (storing && createdId) storing.store.begin(storing.accountId, createdId, () => inProgress(created));
      }
      if (firstTokenAt === undefined && event.data.includes('.delta"')) firstTokenAt = performance.now();
      const final = reader.outcome() !== undefined ? reader.response() : undefined;
      if (storing && final && typeof final.id === 'string') {
        // Stored before the client has it: its id (the upstream's) tells another node no time to wait for a batch.
        saveResponse(storing, final as ResponseObject, exchange);
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
    return { error, usage: usageOf(reader.usage()), firstTokenAt, responseBody: sse.body() };
  } catch (error) {
    const failure = toApiError(error);
    onFailure(failure);
    if (!sse.closed) {
      const code = failure.code ?? 'server_error';
      const failed = failedResponse(created, code, failure.message);
      const errorEvent = { type: 'error', sequence_number: lastSequence + 1, code, message: failure.message };
      const failedEvent = { type: 'response.failed', sequence_number: lastSequence + 2, response: failed };
      await sse.write(
        sseEvent('error', JSON.stringify(errorEvent)) +
          sseEvent('response.failed', JSON.stringify(failedEvent)) +
          sseDone,
      );
    }
    sse.end();
    // A broken stream is stored as failed, like a translated one (what it had generated is not kept: only the
    // terminal event is read).
    if (storing && !saved && createdId) {
      saveResponse(storing, failedResponse(created, failure.code ?? 'server_error', failure.message), exchange);
    }
    return { error: failure, usage: usageOf(reader.usage()), firstTokenAt, responseBody: sse.body() };
  } finally {
    if (storing && createdId) storing.store.end(createdId);
  }
}

function inProgress(created: Record<string, unknown> | undefined): ResponseObject {
  return { ...(created ?? {}), status: 'in_progress' } as unknown as ResponseObject;
}

function failedResponse(created: Record<string, unknown> | undefined, code: string, message: string): ResponseObject {
  return { ...(created ?? {}), status: 'failed', error: { code, message } } as unknown as ResponseObject;
}

/**
 * The name an event goes to the client under: its `type`, which its data must carry as a JSON object (the Responses
 * clients dispatch on it), and which its `event:` line, when there is one, must repeat. Anything else cannot be relayed
 * as a Responses event: the stream fails as malformed. Also the characters a `*.delta` event generated (text, a
 * tool call's arguments, reasoning).
 */
function checkedEvent(provider: string, event: SseEvent): { name: string; delta: number } {
  let type: unknown;
  let delta: unknown;
  try {
    const value = JSON.parse(event.data) as { type?: unknown; delta?: unknown } | null;
    type = value?.type;
    delta = value?.delta;
  } catch {
    throw malformed(provider, 'stream data that is not JSON');
  }
  if (typeof type !== 'string' || type === '') throw malformed(provider, 'a stream event without a type');
  if (event.event !== undefined && event.event !== type) {
    throw malformed(
      provider,
      `a stream event named "${event.event.slice(0, 100)}" whose type is "${type.slice(0, 100)}"`,
    );
  }
  // Audio deltas are base64, not text: they would count several times what they cost.
  const counted = typeof delta === 'string' && type.endsWith('.delta') && type !== 'response.audio.delta';
  return { name: type, delta: counted ? (delta as string).length : 0 };
}

function upstreamFailed(response: Record<string, unknown> | undefined, provider: string): ApiError {
  const reported = response?.error as { message?: unknown } | null | undefined;
  const message = typeof reported?.message === 'string' ? reported.message : 'the response failed';
  return apiError('upstream_error', `The upstream provider "${provider}" reported: ${message.slice(0, 500)}`);
}

function responseOf(data: string): Record<string, unknown> | undefined {
  try {
    const value = JSON.parse(data) as { response?: unknown };
    return value.response && typeof value.response === 'object'
      ? (value.response as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
