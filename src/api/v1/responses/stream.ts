import { toApiError } from '../../../errors/api-error.js';
import { chunkHasContent, generatedCharacters } from '../../../openai/normalize-chunk.js';
import type { StreamItem } from '../../../providers/provider.js';
import {
  estimatePromptCharacters,
  estimateUsage,
  readUsage,
  type TokenUsage,
  toWireUsage,
} from '../../../usage/usage.js';
import { abortedError } from '../pipeline/aborted-error.js';
import { announceDroppedParameters } from '../pipeline/dropped-parameters.js';
import type { Exchange, Outcome } from '../pipeline/endpoint.js';
import { SseResponse } from '../pipeline/sse-response.js';
import { newResponseId } from './ids.js';
import { relayNativeStream } from './native-stream.js';
import { type ResponsesPlan, type ResponsesResult, responsesOperation } from './operation.js';
import { encryptsThinking } from './reasoning-envelope.js';
import { beginStoring, type Storing, saveResponse, showItem } from './state.js';
import { createResponseStreamTranslator, formatEvents, streamEnd } from './stream-events.js';
import type { ChatTranslation } from './to-chat-request.js';
import { createToolNameMap } from './tool-names.js';
import type { ResponseEvent, ResponseObject } from './types.js';
import { inputCharacters } from './usage.js';

const emptyToolNames = createToolNameMap([]);

/**
 * A response answered as an SSE stream: chat chunks translated into Responses events as they arrive (the events of one
 * chunk written in one write, each whole), or a native upstream's events relayed. Failures before the first event
 * are ordinary HTTP errors (and may still fail over); after it, an `error` event then `response.failed`. Not async:
 * the request is not held while the stream lasts.
 */
export function streamResponse(
  plan: ResponsesPlan,
  base: ResponseObject,
  storing: Storing | undefined,
  exchange: Exchange,
): Promise<Outcome> {
  const { services } = exchange;
  const sse = new SseResponse(
    exchange.response,
    exchange.requestId,
    services.config.server.streamKeepaliveMs,
    exchange.logBodies,
    services.config.server.sendTimeoutMs,
  );
  const onFailure = services.dispatcher.streamFailureReporter(exchange.trace, exchange.principal.accountId);
  const primed = services.dispatcher.run(
    responsesOperation(plan, onFailure),
    exchange.signal,
    exchange.trace,
    exchange.principal.accountId,
  );
  // The prompt's size, for an estimate of usage a native upstream does not report (the request is not kept).
  const promptCharacters = inputCharacters(plan.request);
  const encryptThinking = encryptsThinking(plan.request.include, storing !== undefined);
  return relay(primed, sse, base, storing, exchange, onFailure, promptCharacters, encryptThinking);
}

async function relay(
  primed: Promise<ResponsesResult>,
  sse: SseResponse,
  base: ResponseObject,
  storing: Storing | undefined,
  exchange: Exchange,
  onFailure: (error: unknown) => void,
  promptCharacters: number,
  encryptThinking: boolean,
): Promise<Outcome> {
  let result: ResponsesResult;
  try {
    result = await primed;
  } catch (error) {
    if (!sse.started) {
      sse.stop();
      throw error;
    }
    // Keepalive comments had already committed the response: the failure can only be told in-band.
    const failure = toApiError(error);
    const translator = createResponseStreamTranslator({ response: base, toolNames: emptyToolNames });
    await sse.write(formatEvents(translator.fail(failure)) + streamEnd);
    sse.end();
    return { error: failure, responseBody: sse.body() };
  }
  announceDroppedParameters(exchange.response, exchange.trace);
  if (result.kind === 'native')
    return relayNativeStream(result.response, sse, storing, exchange, onFailure, promptCharacters);
  if (result.kind !== 'chat-stream') throw new Error('a stream got a JSON response');
  return relayChat(result.items, result.translation, sse, base, storing, exchange, encryptThinking);
}

async function relayChat(
  items: AsyncIterable<StreamItem>,
  translation: ChatTranslation,
  sse: SseResponse,
  asked: ResponseObject,
  storing: Storing | undefined,
  exchange: Exchange,
  encryptThinking: boolean,
): Promise<Outcome> {
  // Named when its stream shows it, not when it was asked for: another node looks for a young id until the batch with
  // the row standing for it must have been written, and the upstream may have taken long to begin.
  const base: ResponseObject = { ...asked, id: newResponseId() };
  const translator = createResponseStreamTranslator({
    response: base,
    toolNames: translation.toolNames,
    encryptThinking,
  });
  const promptCharacters = estimatePromptCharacters(translation.request);
  let completionCharacters = 0;
  let reported: TokenUsage | undefined;
  let firstTokenAt: number | undefined;
  let saved = false;
  // From response.created on, the client knows the id: retrieval and deletion find the response while it streams.
  if (storing) beginStoring(storing, translator.response(), translator.response);
  try {
    await sse.write(formatEvents(translator.start()));
    for await (const item of items) {
      const chunk = item.chunk;
      if (firstTokenAt === undefined && chunkHasContent(chunk)) firstTokenAt = performance.now();
      completionCharacters += generatedCharacters(chunk);
      if (chunk.usage) reported = readUsage(chunk.usage) ?? reported;
      const events = translator.push(chunk);
      if (events.length === 0) continue;
      if (storing) showItems(storing, base.id, events);
      await sse.write(formatEvents(events));
    }
    const usage = reported ?? estimateUsage(promptCharacters, completionCharacters);
    let finishing = translator.finish(reported ? undefined : toWireUsage(usage));
    if (storing) {
      if (!saveResponse(storing, translator.response(), exchange).stored) finishing = markedNotStored(finishing);
      saved = true;
      // Stored before the client can continue it on another node (which waits only for a young id's batch).
      await storing.store.writeBeforeAnswering(base.id);
    }
    await sse.write(formatEvents(finishing) + streamEnd);
    sse.end();
    return { usage, firstTokenAt, responseBody: sse.body() };
  } catch (error) {
    const usage =
      reported ?? (completionCharacters > 0 ? estimateUsage(promptCharacters, completionCharacters) : undefined);
    const signal = exchange.signal;
    const failure = sse.closed ? toApiError(error) : signal.aborted ? abortedError(signal.reason) : toApiError(error);
    // A client still there is told in-band: an `error` event, then `response.failed`; never a clean-looking end.
    if (!sse.closed) await sse.write(formatEvents(translator.fail(failure)) + streamEnd);
    else translator.fail(failure);
    sse.end();
    if (storing && !saved) saveResponse(storing, translator.response(), exchange);
    return { error: failure, usage, firstTokenAt, responseBody: sse.body() };
  } finally {
    storing?.store.end(base.id);
  }
}

/** The output items these events show the client, for the row that stands for the response while it streams. */
function showItems(storing: Storing, responseId: string, events: readonly ResponseEvent[]): void {
  for (const event of events) {
    if (event.type === 'response.output_item.added') showItem(storing, responseId, event.item);
  }
}

/** The terminal events of a response grown too large to store: their response says `"store": false`. */
function markedNotStored(events: readonly ResponseEvent[]): ResponseEvent[] {
  return events.map((event) =>
    event.response && typeof event.response === 'object'
      ? { ...event, response: { ...event.response, store: false } }
      : event,
  );
}
