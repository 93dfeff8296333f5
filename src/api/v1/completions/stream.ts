import { createFinishKeeper } from '../../../openai/single-finish.js';
import { textCharacters, textChunkHasContent } from '../../../openai/synthesize-text-stream.js';
import type { TextCompletion, TextCompletionRequest } from '../../../openai/text-completion-types.js';
import type { TextStreamItem } from '../../../providers/provider.js';
import { sseData } from '../../../upstream/sse.js';
import { readUsage, type TokenUsage } from '../../../usage/usage.js';
import type { Exchange, Outcome } from '../pipeline/endpoint.js';
import { openSse, runOperation, streamFailureReporter } from '../pipeline/exchange-dispatch.js';
import { finishedTextChoice, finishUnfinishedChoices } from '../pipeline/finish-unfinished-choices.js';
import { endChunkStream, endFailedStream } from '../pipeline/openai-stream-end.js';
import type { SseResponse } from '../pipeline/sse-response.js';
import { textStreamOperation } from './operation.js';
import { estimateTextUsage } from './usage.js';

/**
 * A legacy text completion answered as an SSE stream, chunk by chunk as the upstream sends them. Usage is always
 * requested upstream (for the log and limits); the client sees the usage chunk only when it asked for it
 * (stream_options.include_usage), and gets an estimate there when the upstream reported none. Failures after the
 * first event are reported in-band, then [DONE]: never a clean-looking finish.
 */
export function streamText(
  request: TextCompletionRequest,
  body: Buffer | undefined,
  exchange: Exchange,
): Promise<Outcome> {
  const sse = openSse(exchange);
  const onFailure = streamFailureReporter(exchange);
  const primed = runOperation(exchange, textStreamOperation(request, body, onFailure));
  const includeUsage = request.stream_options?.include_usage === true;
  return relay(primed, sse, exchange, includeUsage, (characters) => estimateTextUsage(request, characters));
}

// The same loop as chat's relay (chat-completions/stream.ts), kept apart: one shared loop cost ~5 ns more per chunk
// (docs/performance.md, "Two relay loops").
async function relay(
  primed: Promise<AsyncIterable<TextStreamItem>>,
  sse: SseResponse,
  exchange: Exchange,
  includeUsage: boolean,
  estimate: (completionCharacters: number) => TokenUsage,
): Promise<Outcome> {
  let completionCharacters = 0;
  let reported: TokenUsage | undefined;
  let lastChunk: TextCompletion | undefined;
  let firstTokenAt: number | undefined;
  try {
    const items = await primed;
    sse.start();
    const finishOnce = createFinishKeeper();
    let usageSent = false;
    for await (const item of items) {
      const chunk = item.chunk;
      let raw = item.raw;
      lastChunk = chunk;
      // An upstream's chunk named otherwise (or not at all) still reaches the client as what it is.
      if (chunk.object !== 'text_completion') {
        chunk.object = 'text_completion';
        raw = undefined;
      }
      if (finishOnce(chunk)) raw = undefined;
      if (firstTokenAt === undefined && textChunkHasContent(chunk)) firstTokenAt = performance.now();
      completionCharacters += textCharacters(chunk);
      if (chunk.usage) {
        const usage = readUsage(chunk.usage);
        reported = usage ?? reported;
        // As on chat: usage only for a client that asked, once, and only as counts (else the estimate goes at the end).
        if (includeUsage && usage && !usageSent) usageSent = true;
        else {
          if (chunk.choices.length === 0) continue;
          chunk.usage = undefined;
          raw = undefined;
        }
      }
      await sse.write(sseData(raw ?? JSON.stringify(chunk)));
    }
    await finishUnfinishedChoices(sse, lastChunk, finishOnce.unfinished(), finishedTextChoice);
    const usage = reported ?? estimate(completionCharacters);
    await endChunkStream(sse, lastChunk, includeUsage && !reported ? usage : undefined);
    return { usage, firstTokenAt, responseBody: sse.body() };
  } catch (error) {
    const usage = reported ?? (completionCharacters > 0 ? estimate(completionCharacters) : undefined);
    const failure = await endFailedStream(sse, exchange.signal, error);
    return { error: failure, usage, firstTokenAt, responseBody: sse.body() };
  }
}
