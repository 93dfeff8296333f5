import { type ApiError, apiError, toApiError } from '../../../errors/api-error.js';
import { anthropicStreamError } from '../../../errors/render-anthropic.js';
import { chunkHasContent, generatedCharacters } from '../../../openai/normalize-chunk.js';
import type { StreamItem } from '../../../providers/provider.js';
import type { SseEvent } from '../../../upstream/sse.js';
import { readUsage, type TokenUsage, toWireUsage } from '../../../usage/usage.js';
import { abortedError } from '../pipeline/aborted-error.js';
import { announceDroppedParameters } from '../pipeline/dropped-parameters.js';
import type { Exchange, Outcome } from '../pipeline/endpoint.js';
import { openSse, runOperation, streamFailureReporter } from '../pipeline/exchange-dispatch.js';
import type { SseResponse } from '../pipeline/sse-response.js';
import { toAnthropicUsage } from './anthropic-usage.js';
import { estimateMessageUsage } from './complete.js';
import { estimateInputTokens } from './count-tokens.js';
import { createNativeStreamRelay } from './native-usage.js';
import { type ClientMessage, type MessagesEvents, messagesStreamOperation } from './operation.js';
import { createMessagesStreamTranslator, type MessagesStreamTranslator } from './stream-events.js';

/**
 * A Messages request answered as an SSE stream: an Anthropic upstream's events relayed one by one as they arrive
 * (usage read from message_start and message_delta on the way), or a chat stream translated into Anthropic's events.
 * Before the first event, failures are ordinary HTTP errors (and fail over); after it, an `error` event, never a
 * clean-looking end: an upstream stream that stops before `message_stop` gets one too.
 * Not async: the request goes to dispatch and is not held by this function while the stream lasts.
 */
export function streamMessage(client: ClientMessage, exchange: Exchange): Promise<Outcome> {
  const sse = openSse(exchange);
  const onFailure = streamFailureReporter(exchange);
  const primed = runOperation(exchange, messagesStreamOperation(client, onFailure));
  const request = client.request;
  const estimate = (completionCharacters: number) => estimateMessageUsage(request, completionCharacters);
  // Only a translated stream needs one (and the estimate of the prompt it opens with).
  const translator = () =>
    createMessagesStreamTranslator({
      model: request.model,
      stopSequences: request.stop_sequences,
      estimatedInputTokens: estimateInputTokens(request),
    });
  return relay(primed, sse, exchange, estimate, translator, onFailure);
}

/** What a relay learned, whichever way the stream went. */
interface Progress {
  reported: TokenUsage | undefined;
  completionCharacters: number;
  firstTokenAt: number | undefined;
}

async function relay(
  primed: Promise<MessagesEvents>,
  sse: SseResponse,
  exchange: Exchange,
  estimate: (completionCharacters: number) => TokenUsage,
  translator: () => MessagesStreamTranslator,
  onFailure: (error: unknown) => void,
): Promise<Outcome> {
  const progress: Progress = { reported: undefined, completionCharacters: 0, firstTokenAt: undefined };
  try {
    const answer = await primed;
    announceDroppedParameters(exchange.response, exchange.trace);
    sse.start();
    let error: ApiError | undefined;
    if (answer.kind === 'forwarded') {
      const provider = exchange.trace.served?.provider ?? 'upstream';
      error = await relayForwarded(answer.events, sse, provider, progress, estimate);
      // An error event relayed as it came (or a stream cut short) is the attempt's failure all the same: its
      // deployment's health and the log's attempts learn of it, as when the stream itself throws.
      if (error) onFailure(error);
    } else {
      await relayTranslated(answer.items, sse, translator(), estimate, progress);
    }
    sse.end();
    const usage = progress.reported ?? estimate(progress.completionCharacters);
    return { error, usage, firstTokenAt: progress.firstTokenAt, responseBody: sse.body() };
  } catch (error) {
    // Before the first byte, errors are ordinary HTTP errors (the pipeline renders them), and nothing was generated.
    if (!sse.started) {
      sse.stop();
      throw error;
    }
    const usage =
      progress.reported ?? (progress.completionCharacters > 0 ? estimate(progress.completionCharacters) : undefined);
    const signal = exchange.signal;
    const failure = sse.closed ? toApiError(error) : signal.aborted ? abortedError(signal.reason) : toApiError(error);
    if (!sse.closed) await sse.write(anthropicStreamError(failure));
    sse.end();
    return { error: failure, usage, firstTokenAt: progress.firstTokenAt, responseBody: sse.body() };
  }
}

/**
 * An Anthropic upstream's events, each as it came. Returns the error the stream ended with: an upstream `error`
 * event (relayed as it was), or one of the gateway's when the upstream stopped before `message_stop`.
 */
async function relayForwarded(
  events: AsyncIterable<SseEvent>,
  sse: SseResponse,
  providerName: string,
  progress: Progress,
  estimate: (completionCharacters: number) => TokenUsage,
): Promise<ApiError | undefined> {
  const reader = createNativeStreamRelay(providerName, (characters) =>
    toAnthropicUsage(toWireUsage(estimate(characters))),
  );
  try {
    for await (const event of events) {
      if (progress.firstTokenAt === undefined && event.event === 'content_block_delta') {
        progress.firstTokenAt = performance.now();
      }
      await sse.write(reader.relay(event));
      // The stream ends there: whatever an upstream sends after it is not relayed.
      if (reader.completed || reader.error) break;
    }
  } finally {
    progress.reported = reader.usage();
    progress.completionCharacters = reader.generatedCharacters;
  }
  if (reader.error) return reader.error;
  if (reader.completed) return undefined;
  const cutShort = apiError(
    'upstream_error',
    `The upstream provider "${providerName}" ended the stream before message_stop.`,
  );
  await sse.write(anthropicStreamError(cutShort));
  return cutShort;
}

async function relayTranslated(
  items: AsyncIterable<StreamItem>,
  sse: SseResponse,
  translator: MessagesStreamTranslator,
  estimate: (completionCharacters: number) => TokenUsage,
  progress: Progress,
): Promise<void> {
  for await (const item of items) {
    const chunk = item.chunk;
    if (progress.firstTokenAt === undefined && chunkHasContent(chunk)) progress.firstTokenAt = performance.now();
    progress.completionCharacters += generatedCharacters(chunk);
    if (chunk.usage) progress.reported = readUsage(chunk.usage) ?? progress.reported;
    const events = translator.push(chunk);
    if (events.length > 0) await sse.write(events.join(''));
  }
  const fallback = progress.reported ? undefined : toWireUsage(estimate(progress.completionCharacters));
  await sse.write(translator.finish(fallback).join(''));
}
