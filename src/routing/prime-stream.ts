import { chunkHasContent } from '../openai/normalize-chunk.js';
import type { StreamItem, StreamItems } from '../providers/provider.js';

/**
 * Holds a stream back until its first content chunk (or its end), so a failure before any content reached the client
 * can still fail over to another deployment; returns the stream replayed from its first chunk. Role-only chunks and
 * comments carry nothing the client could have acted on, so an upstream that dies right after `message_start` (an
 * Anthropic overload) is retried instead of surfacing as an in-band error.
 */
export async function primeStream(items: StreamItems): Promise<AsyncIterable<StreamItem>> {
  const iterator: AsyncIterator<StreamItem> | Iterator<StreamItem> =
    Symbol.asyncIterator in items ? items[Symbol.asyncIterator]() : items[Symbol.iterator]();
  const buffered: StreamItem[] = [];
  let finished = false;
  try {
    for (;;) {
      const next = await iterator.next();
      if (next.done) {
        finished = true;
        break;
      }
      buffered.push(next.value);
      if (chunkHasContent(next.value.chunk)) break;
    }
  } catch (error) {
    await iterator.return?.();
    throw error;
  }
  return replay(buffered, finished ? undefined : iterator);
}

async function* replay(
  buffered: StreamItem[],
  iterator: AsyncIterator<StreamItem> | Iterator<StreamItem> | undefined,
): AsyncGenerator<StreamItem> {
  yield* buffered;
  // Not kept for the rest of the stream: each item's raw text is a slice that keeps the whole upstream read it came
  // from alive (~1 KB per open stream, measured with 1,000 streams).
  buffered.length = 0;
  if (!iterator) return;
  let done = false;
  try {
    for (;;) {
      const next = await iterator.next();
      if (next.done) {
        done = true;
        return;
      }
      yield next.value;
    }
  } finally {
    // The consumer stopped early (client gone): release the upstream.
    if (!done) await iterator.return?.();
  }
}
