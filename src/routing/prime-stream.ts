import { chunkHasContent } from '../openai/normalize-chunk.js';
import type { StreamItem, StreamItems } from '../providers/provider.js';

const chatItemHasContent = (item: StreamItem) => chunkHasContent(item.chunk);

/**
 * Holds a stream back until its first content chunk (or its end), so a failure before any content reached the client
 * can still fail over to another deployment; returns the stream replayed from its first chunk. Role-only chunks and
 * comments carry nothing the client could have acted on, so an upstream that dies right after `message_start` (an
 * Anthropic overload) is retried instead of surfacing as an in-band error.
 */
export function primeStream(
  items: StreamItems,
  /** Called with an error the stream raises after it was primed (then rethrown to the consumer). */
  onFailure?: (error: unknown) => void,
): Promise<AsyncIterable<StreamItem>> {
  return primeItems(items, chatItemHasContent, onFailure);
}

/** primeStream for a stream of any kind of item (text completions' chunks): `hasContent` says what counts. */
export async function primeItems<Item>(
  items: AsyncIterable<Item> | Iterable<Item>,
  hasContent: (item: Item) => boolean,
  onFailure?: (error: unknown) => void,
): Promise<AsyncIterable<Item>> {
  const iterator: AsyncIterator<Item> | Iterator<Item> =
    Symbol.asyncIterator in items ? items[Symbol.asyncIterator]() : items[Symbol.iterator]();
  const buffered: Item[] = [];
  let finished = false;
  try {
    for (;;) {
      const next = await iterator.next();
      if (next.done) {
        finished = true;
        break;
      }
      buffered.push(next.value);
      if (hasContent(next.value)) break;
    }
  } catch (error) {
    await iterator.return?.();
    throw error;
  }
  return new PrimedStream(buffered, finished ? undefined : iterator, onFailure);
}

const ended: IteratorReturnResult<undefined> = Object.freeze({ value: undefined, done: true });

/**
 * The primed stream: the buffered items, then the rest straight from the upstream's iterator. An iterator object,
 * not an async generator: each generator layer between the upstream and the client cost a promise hand-off per chunk
 * and memory per open stream (docs/performance.md#primed-streams).
 */
class PrimedStream<Item> implements AsyncIterableIterator<Item> {
  private replayed = 0;

  constructor(
    private buffered: Item[],
    /** The upstream's iterator until it has ended, failed or been returned. */
    private rest: AsyncIterator<Item> | Iterator<Item> | undefined,
    private readonly onFailure: ((error: unknown) => void) | undefined,
  ) {}

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<Item>> {
    if (this.replayed < this.buffered.length) {
      const value = this.buffered[this.replayed++] as Item;
      // Not kept for the rest of the stream: each item's raw text is a slice that keeps the whole upstream read it
      // came from alive.
      if (this.replayed === this.buffered.length) this.buffered = [];
      return Promise.resolve({ value, done: false });
    }
    const rest = this.rest;
    if (!rest) return Promise.resolve(ended);
    let result: Promise<IteratorResult<Item>> | IteratorResult<Item>;
    try {
      result = rest.next();
    } catch (error) {
      return Promise.reject(this.failed(error));
    }
    // An upstream's iterator answers with a promise; a synthesized stream's (an array's) at once.
    if (typeof (result as Partial<PromiseLike<unknown>>).then === 'function') {
      return Promise.resolve(result).then(this.onNext, this.onError);
    }
    return Promise.resolve(this.settled(result as IteratorResult<Item>));
  }

  // Bound once, not a pair of closures per chunk.
  private readonly onNext = (next: IteratorResult<Item>) => this.settled(next);
  private readonly onError = (error: unknown): never => {
    throw this.failed(error);
  };

  /** The consumer stopped early (the client went away): release the upstream. */
  async return(): Promise<IteratorResult<Item>> {
    this.buffered = [];
    const rest = this.rest;
    this.rest = undefined;
    await rest?.return?.();
    return ended;
  }

  private settled(next: IteratorResult<Item>): IteratorResult<Item> {
    if (next.done) this.rest = undefined;
    return next;
  }

  private failed(error: unknown): unknown {
    this.rest = undefined;
    this.onFailure?.(error);
    return error;
  }
}
