import { type ApiError, toApiError } from '../../../errors/api-error.js';
import { openAiStreamError } from '../../../errors/render-openai.js';
import type { CancelSignal } from '../../../server/cancellation.js';
import { sseData, sseDone } from '../../../upstream/sse.js';
import { type TokenUsage, toWireUsage } from '../../../usage/usage.js';
import { abortedError } from './aborted-error.js';
import type { SseResponse } from './sse-response.js';

/**
 * Ends an OpenAI chunk stream (chat, legacy completions) that ran to its end. `usage` is given when the client asked
 * for usage and the upstream sent none: the gateway's estimate then goes out as the last chunk, shaped like the others.
 */
export async function endChunkStream(
  sse: SseResponse,
  lastChunk: { choices: unknown[] } | undefined,
  usage: TokenUsage | undefined,
): Promise<void> {
  if (usage && lastChunk) {
    await sse.write(sseData(JSON.stringify({ ...lastChunk, choices: [], usage: toWireUsage(usage) })));
  }
  sse.endWith(sseDone);
}

/**
 * Ends an OpenAI-style stream that failed. Before its first byte the error is an ordinary HTTP error: it is thrown
 * again for the pipeline to render. After it, a client that left cannot be told anything; one still there gets an
 * in-band error, then [DONE]: never a clean-looking finish. Returns the error for the log.
 */
export async function endFailedStream(sse: SseResponse, signal: CancelSignal, error: unknown): Promise<ApiError> {
  if (!sse.started) {
    sse.stop();
    throw error;
  }
  const failure = sse.closed ? toApiError(error) : signal.aborted ? abortedError(signal.reason) : toApiError(error);
  if (!sse.closed) {
    await sse.write(openAiStreamError(failure));
    await sse.write(sseDone);
  }
  sse.end();
  return failure;
}
