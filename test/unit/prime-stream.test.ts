import { describe, expect, it } from 'vitest';
import type { ChatCompletion } from '../../src/openai/types.js';
import type { StreamItem } from '../../src/providers/provider.js';
import { primeStream } from '../../src/routing/prime-stream.js';

const item = (content: string | undefined): StreamItem => ({
  chunk: {
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'm',
    choices: [{ index: 0, delta: content === undefined ? { role: 'assistant' } : { content }, finish_reason: null }],
  } as unknown as ChatCompletion,
});

const contents = (items: StreamItem[]) =>
  items.map((entry) => (entry.chunk.choices[0]?.delta as { content?: string } | undefined)?.content ?? '<role>');

/** An upstream stream that records how far it was read and whether it was released. */
function upstream(parts: Array<string | undefined | Error>) {
  const state = { pulled: 0, released: 0 };
  async function* generate(): AsyncGenerator<StreamItem> {
    try {
      for (const part of parts) {
        state.pulled++;
        if (part instanceof Error) throw part;
        yield item(part);
      }
    } finally {
      state.released++;
    }
  }
  return { stream: generate(), state };
}

async function collect(stream: AsyncIterable<StreamItem>): Promise<StreamItem[]> {
  const items: StreamItem[] = [];
  for await (const entry of stream) items.push(entry);
  return items;
}

describe('primeStream', () => {
  it('reads up to the first content chunk, then gives every chunk once, in order', async () => {
    const { stream, state } = upstream([undefined, 'a', 'b', 'c']);
    const primed = await primeStream(stream);
    expect(state.pulled).toBe(2);
    expect(contents(await collect(primed))).toEqual(['<role>', 'a', 'b', 'c']);
    expect(state.released).toBe(1);
    // Iterating an ended stream again yields nothing.
    expect(await collect(primed)).toEqual([]);
  });

  it('takes a synchronous iterable (a synthesized stream)', async () => {
    const primed = await primeStream([item(undefined), item('x'), item('y')]);
    expect(contents(await collect(primed))).toEqual(['<role>', 'x', 'y']);
  });

  it('releases the upstream once when the consumer stops early', async () => {
    const { stream, state } = upstream(['a', 'b', 'c', 'd']);
    const primed = await primeStream(stream);
    const seen: string[] = [];
    for await (const entry of primed) {
      seen.push(...contents([entry]));
      if (seen.length === 2) break;
    }
    expect(seen).toEqual(['a', 'b']);
    expect(state.released).toBe(1);
    expect(state.pulled).toBe(2);
  });

  it('reports a failure after the first content chunk to onFailure and to the consumer', async () => {
    const failures: unknown[] = [];
    const broken = new Error('connection reset');
    const { stream } = upstream(['a', 'b', broken, 'never']);
    const primed = await primeStream(stream, (error) => failures.push(error));
    const seen: StreamItem[] = [];
    await expect(
      (async () => {
        for await (const entry of primed) seen.push(entry);
      })(),
    ).rejects.toBe(broken);
    expect(contents(seen)).toEqual(['a', 'b']);
    expect(failures).toEqual([broken]);
  });

  it('throws a failure before the first content chunk from primeStream itself, without onFailure', async () => {
    const failures: unknown[] = [];
    const broken = new Error('overloaded');
    const { stream, state } = upstream([undefined, broken]);
    await expect(primeStream(stream, (error) => failures.push(error))).rejects.toBe(broken);
    expect(failures).toEqual([]);
    expect(state.released).toBe(1);
  });
});
