/**
 * Turns callbacks into an async iterator: node-llama-cpp reports generated text through callbacks while the stream
 * writer pulls chunks. Items are buffered (the writer may be slower than the model for a moment); the buffer is bounded
 * by the request's token limit, since every item is at least one token.
 */
export class EventChannel<Item> implements AsyncIterable<Item> {
  private readonly buffered: Item[] = [];
  private ended = false;
  private failure: { error: unknown } | undefined;
  private wake: (() => void) | undefined;

  push(item: Item): void {
    if (this.ended) return;
    this.buffered.push(item);
    this.notify();
  }

  end(): void {
    this.ended = true;
    this.notify();
  }

  fail(error: unknown): void {
    if (this.ended) return;
    this.failure = { error };
    this.ended = true;
    this.notify();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Item> {
    for (;;) {
      const item = this.buffered.shift();
      if (item !== undefined) {
        yield item;
        continue;
      }
      if (this.ended) {
        if (this.failure) throw this.failure.error;
        return;
      }
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    }
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}
