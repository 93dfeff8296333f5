import { sseData } from '../../../upstream/sse.js';
import type { SseResponse } from './sse-response.js';

/**
 * The finish chunks of choices an OpenAI chunk stream (chat, legacy completions) never finished, its [DONE] having come
 * first: each ends as it stopped, with `stop`, in a chunk named like the stream's last one, since a client that expects
 * one finish per choice (the openai package's stream helper) would otherwise throw or wait. Shared by the two relay
 * loops, which stay apart (docs/performance.md, "Two relay loops"); this runs once a stream, after its loop.
 */

interface ChunkIdentity {
  id?: unknown;
  object?: unknown;
  created?: unknown;
  model?: unknown;
  system_fingerprint?: unknown;
}

/** A chat choice's finish: an empty delta. */
export const finishedChatChoice = (index: unknown) => ({ index, delta: {}, logprobs: null, finish_reason: 'stop' });

/** A legacy completion choice's finish: no more text. */
export const finishedTextChoice = (index: unknown) => ({ text: '', index, logprobs: null, finish_reason: 'stop' });

export async function finishUnfinishedChoices(
  sse: SseResponse,
  lastChunk: ChunkIdentity | undefined,
  unfinished: readonly unknown[],
  finishedChoice: (index: unknown) => Record<string, unknown>,
): Promise<void> {
  if (!lastChunk) return;
  const { id, object, created, model, system_fingerprint } = lastChunk;
  for (const index of unfinished) {
    const choices = [finishedChoice(index)];
    await sse.write(sseData(JSON.stringify({ id, object, created, model, system_fingerprint, choices })));
  }
}
