import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../../src/errors/api-error.js';
import { generate, type PreparedGeneration } from '../../src/providers/local/generate.js';
import type { LocalRuntime, LocalSlot } from '../../src/providers/local/runtime.js';
import { SlotPool } from '../../src/providers/local/slot-pool.js';
import { StallWatchdog, stopGraceMs } from '../../src/providers/local/stall-watchdog.js';
import type { ProviderCall } from '../../src/providers/provider.js';

// Fake timers: the watchdog's bounds are minutes in production; the test moves the clock instead of waiting.
beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

const timeouts = { firstTokenMs: 300_000, idleMs: 120_000 };

describe('StallWatchdog', () => {
  it('fires after the first-token bound without output, then after the idle bound between outputs', () => {
    const stalls: ApiError[] = [];
    const silent = new StallWatchdog(timeouts, 'tiny', (error) => stalls.push(error));
    vi.advanceTimersByTime(299_999);
    expect(stalls).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(stalls.map((error) => [error.status, error.code])).toEqual([[504, 'upstream_timeout']]);
    expect(stalls[0]?.message).toMatch(/tiny produced no output within 300 s/);
    expect(silent.stalledWith).toBe(stalls[0]);

    const producing = new StallWatchdog(timeouts, 'tiny', (error) => stalls.push(error));
    vi.advanceTimersByTime(200_000);
    producing.progress();
    for (let token = 0; token < 10; token++) {
      vi.advanceTimersByTime(119_000);
      producing.progress();
    }
    expect(stalls).toHaveLength(1);
    vi.advanceTimersByTime(120_000);
    expect(stalls).toHaveLength(2);
    expect(stalls[1]?.message).toMatch(/produced nothing for 120 s/);
  });

  it('fails a guarded step that never settles, and says the slot is unsafe until the step settles', async () => {
    const watchdog = new StallWatchdog(timeouts, 'tiny');
    let finish: () => void = () => undefined;
    const step = new Promise<void>((resolve) => {
      finish = resolve;
    });
    const guarded = watchdog.guard(step).catch((error: unknown) => error);
    vi.advanceTimersByTime(300_000);
    expect(await guarded).toBeInstanceOf(ApiError);

    // Settles within the grace period: reusable.
    const reusable = watchdog.slotReusable();
    vi.advanceTimersByTime(stopGraceMs - 1);
    finish();
    expect(await reusable).toBe(true);

    // Never settles: not reusable.
    const stuck = new StallWatchdog(timeouts, 'tiny');
    void stuck.guard(new Promise(() => undefined)).catch(() => undefined);
    vi.advanceTimersByTime(300_000);
    const verdict = stuck.slotReusable();
    await vi.advanceTimersByTimeAsync(stopGraceMs);
    expect(await verdict).toBe(false);
  });

  it('never fires once stopped, and a generation that did not stall is always reusable', async () => {
    const stalls: ApiError[] = [];
    const watchdog = new StallWatchdog(timeouts, 'tiny', (error) => stalls.push(error));
    watchdog.progress();
    expect(await watchdog.slotReusable()).toBe(true);
    vi.advanceTimersByTime(10 * 300_000);
    expect(stalls).toEqual([]);
  });
});

/** A runtime of one slot whose node-llama-cpp chat is `generateResponse`, and its pool. */
function fakeRuntime(
  generateResponse: (history: unknown, options: { onResponseChunk(chunk: { text: string }): void }) => Promise<unknown>,
  onRetired?: (retired: number) => void,
): { runtime: LocalRuntime; slots: SlotPool<LocalSlot> } {
  const slot = {
    sequence: {
      contextTokens: [],
      tokenMeter: { getState: () => ({}), diff: () => ({ usedOutputTokens: 1 }) },
      compareContextTokens: () => ({ firstDifferentIndex: 0 }),
      clearHistory: async () => undefined,
    },
    chat: { generateResponse },
  } as unknown as LocalSlot;
  const slots = new SlotPool([slot], {
    queueSize: 4,
    queuePerAccount: 4,
    queueTimeoutMs: 600_000,
    modelName: 'tiny',
    ...(onRetired ? { onRetired } : {}),
  });
  return { runtime: { name: 'tiny', timeouts, slots } as unknown as LocalRuntime, slots };
}

const prepared = {
  options: { logitBias: [], frequencyPenalty: 0, presencePenalty: 0, stop: [] },
  promptTokens: [1, 2, 3],
  history: [],
  maxTokens: 16,
} as unknown as PreparedGeneration;

/** Account a's generation on the runtime's one slot. */
async function generationOf(runtime: LocalRuntime, slots: SlotPool<LocalSlot>, signal: AbortSignal) {
  const lease = await slots.acquire(signal, 'account-a');
  return generate(runtime, lease, prepared, { signal, accountId: 'account-a' } as unknown as ProviderCall);
}

describe('a local generation that never settles', () => {
  it('answers 504 at the first-token bound, retires its slot after the grace period, and fails the waiters', async () => {
    const retired: number[] = [];
    // A generation node-llama-cpp never finishes, which ignores its abort signal.
    const { runtime, slots } = fakeRuntime(
      () => new Promise(() => undefined),
      (count) => retired.push(count),
    );
    const signal = new AbortController().signal;
    const events = await generationOf(runtime, slots, signal);
    const waiting = slots.acquire(signal, 'account-b').catch((error: unknown) => error);

    const outcome = (async () => {
      try {
        for await (const _event of events) {
          // nothing is ever produced
        }
        return 'ended';
      } catch (error) {
        return error;
      }
    })();
    await vi.advanceTimersByTimeAsync(300_000);
    // The client is answered at the bound, without waiting for the grace period.
    const error = await outcome;
    expect(error).toBeInstanceOf(ApiError);
    expect([(error as ApiError).status, (error as ApiError).code]).toEqual([504, 'upstream_timeout']);
    expect(retired).toEqual([]);
    await vi.advanceTimersByTimeAsync(stopGraceMs);
    // The slot never went back to the pool: its one slot retired, the pool closed, the waiting request refused.
    expect(retired).toEqual([1]);
    expect(slots.retired).toBe(1);
    const refused = await waiting;
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).code).toBe('model_unavailable');
    expect((await slots.acquire(signal).catch((reason: ApiError) => reason)) as ApiError).toMatchObject({
      code: 'model_unavailable',
    });
  });
});

describe('a local generation whose reader stops early', () => {
  it('keeps its slot until the generation has really stopped, then hands it back', async () => {
    let finishGeneration: () => void = () => undefined;
    let chunk: ((text: string) => void) | undefined;
    // Produces one chunk, then winds down only when the test says (it ignores its abort signal until then).
    const { runtime, slots } = fakeRuntime((_history, options) => {
      chunk = (text) => options.onResponseChunk({ text });
      return new Promise((resolve) => {
        finishGeneration = () => resolve({ metadata: { stopReason: 'abort' } });
      });
    });
    const events = await generationOf(runtime, slots, new AbortController().signal);
    const first = events.next();
    await vi.waitFor(() => expect(chunk).toBeDefined());
    chunk?.('Hello');
    expect((await first).value).toMatchObject({ type: 'content', text: 'Hello' });
    // The reader stops: the generation is told to stop but has not yet.
    const stopped = events.return(undefined);
    await vi.advanceTimersByTimeAsync(10);
    expect(slots.busy).toBe(1);
    finishGeneration();
    await stopped;
    expect(slots.busy).toBe(0);
    expect(slots.retired).toBe(0);
  });
});
