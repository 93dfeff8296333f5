import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/observability/logger.js';
import { fullCollection, reclaimMemoryWhenIdle } from '../../src/server/reclaim-memory-when-idle.js';

const logger = createLogger('silent');
const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Waits until the condition holds (a loaded machine delays timers), failing after a generous deadline. */
async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await tick(10);
  }
}

describe('giving memory back when the data plane goes quiet', () => {
  it('collects after traffic stops (then once in each of the next two intervals), never while requests arrive or are in flight', async () => {
    let started = 0;
    let inFlight = 0;
    let collections = 0;
    let otherCollections = 0;
    const stop = reclaimMemoryWhenIdle({
      started: () => started,
      inFlight: () => inFlight,
      logger,
      intervalMs: 20,
      collect: () => collections++,
      alsoCollect: () => otherCollections++,
    });
    try {
      await tick(70);
      expect(collections, 'nothing served yet: nothing to give back').toBe(0);
      // Traffic: a request starts in every interval.
      for (let index = 0; index < 5; index++) {
        started++;
        await tick(20);
      }
      expect(collections).toBe(0);
      // A long stream stays open: quiet, but not idle.
      inFlight = 1;
      await tick(80);
      expect(collections).toBe(0);
      inFlight = 0;
      await until(() => collections >= 4);
      await tick(100);
      expect(collections, 'per quiet period: two collections, then one in each of the next two intervals').toBe(4);
      expect(otherCollections, 'the other isolates are collected with each pass').toBe(3);
      started++;
      await until(() => collections >= 8);
      await tick(100);
      expect(collections).toBe(8);
      expect(otherCollections).toBe(6);
    } finally {
      stop();
    }
  });

  it("reaches V8's full collection without the --expose-gc flag", () => {
    const collect = fullCollection();
    expect(collect).toBeTypeOf('function');
    collect?.();
  });
});
