import { chunkHasContent, createChunkNormalizer, generatedCharacters } from '../../../openai/normalize-chunk.js';
import { createFinishKeeper } from '../../../openai/single-finish.js';
import type { ChatCompletion, ChatCompletionRequest } from '../../../openai/types.js';
import type { StreamItem } from '../../../providers/provider.js';
import { sseData } from '../../../upstream/sse.js';
import { estimatePromptCharacters, estimateUsage, readUsage, type TokenUsage } from '../../../usage/usage.js';
import { announceDroppedParameters } from '../pipeline/dropped-parameters.js';
import type { Exchange, Outcome } from '../pipeline/endpoint.js';
import { openSse } from '../pipeline/exchange-dispatch.js';
import { finishedChatChoice, finishUnfinishedChoices } from '../pipeline/finish-unfinished-choices.js';
import { endChunkStream, endFailedStream } from '../pipeline/openai-stream-end.js';
import type { SseResponse } from '../pipeline/sse-response.js';

/** What the relay needs of the request once dispatch has it (the request itself is not kept while the stream lasts). */
interface StreamPlan {
  includeUsage: boolean;
  /** The prompt's size, for an estimate of usage when the upstream reports none. */
  promptCharacters: number;
}

/**
 * A chat completion answered as an SSE stream, chunk by chunk as the upstream sends them. Not async: the request and
 * the client's bytes go to dispatch and are not held by this function while the stream lasts.
 */
export function streamChat(
  request: ChatCompletionRequest,
  body: Buffer | undefined,
  exchange: Exchange,
): Promise<Outcome> {
  const { services } = exchange;
  const sse = openSse(exchange);
  // Resolves once the stream has produced content (or ended): until then, failures fail over.
  const primed = services.dispatcher.stream(
    request,
    exchange.signal,
    exchange.trace,
    exchange.principal.accountId,
    body,
  );
  const plan: StreamPlan = {
    includeUsage: request.stream_options?.include_usage === true,
    promptCharacters: estimatePromptCharacters(request),
  };
  return relay(primed, sse, plan, exchange);
}

// The legacy completions relay (completions/stream.ts) repeats this loop on purpose (docs/performance.md, "Two relay
// loops").
async function relay(
  primed: Promise<AsyncIterable<StreamItem>>,
  sse: SseResponse,
  plan: StreamPlan,
  exchange: Exchange,
): Promise<Outcome> {
  let completionCharacters = 0;
  let reported: TokenUsage | undefined;
  let lastChunk: ChatCompletion | undefined;
  let firstTokenAt: number | undefined;
  try {
    const items = await primed;
    announceDroppedParameters(exchange.response, exchange.trace);
    sse.start();
    const normalize = createChunkNormalizer();
    const finishOnce = createFinishKeeper();
    let usageSent = false;
    for await (const item of items) {
      const chunk = item.chunk;
      let raw = item.raw;
      lastChunk = chunk;
      if (normalize(chunk)) raw = undefined;
      if (finishOnce(chunk)) raw = undefined;
      if (firstTokenAt === undefined && chunkHasContent(chunk)) firstTokenAt = performance.now();
      completionCharacters += generatedCharacters(chunk);
      if (chunk.usage) {
        const usage = readUsage(chunk.usage);
        reported = usage ?? reported;
        // Usage is always requested upstream (for the log and limits); the client sees it only if it asked, once, and
        // only as counts (an empty or unreadable one is left out: the gateway's estimate goes at the end instead).
        if (plan.includeUsage && usage && !usageSent) usageSent = true;
        else {
          if (chunk.choices.length === 0) continue;
          chunk.usage = undefined;
          raw = undefined;
        }
      }
      await sse.write(sseData(raw ?? JSON.stringify(chunk)));
    }
    await finishUnfinishedChoices(sse, lastChunk, finishOnce.unfinished(), finishedChatChoice);
    const usage = reported ?? estimateUsage(plan.promptCharacters, completionCharacters);
    await endChunkStream(sse, lastChunk, plan.includeUsage && !reported ? usage : undefined);
    return { usage, firstTokenAt, responseBody: sse.body() };
  } catch (error) {
    // Tokens were spent only if something was generated.
    const usage =
      reported ?? (completionCharacters > 0 ? estimateUsage(plan.promptCharacters, completionCharacters) : undefined);
    const failure = await endFailedStream(sse, exchange.signal, error);
    return { error: failure, usage, firstTokenAt, responseBody: sse.body() };
  }
}
