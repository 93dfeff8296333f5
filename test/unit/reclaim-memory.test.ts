import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/observability/logger.js';
import { fullCollection, reclaimMemoryWhenIdle } from '../../src/server/reclaim-memory-when-idle.js';
import { waitFor } from '../support/wait.js';

const logger = createLogger('silent');

describe('giving memory back when the data plane goes quiet', () => {
  it('collects after traffic stops (then once in each of the next two intervals), never while requests arrive or are in flight', async () => {
    let started = 0;
    let inFlight = 0;
    let collections = 0;
    let otherCollections = 0;
    // Each interval's check starts by reading the request counter: counting the reads counts the intervals, so the
    // test steps by intervals, not by time (a loaded machine delays timers).
    let intervalsChecked = 0;
    const intervals = async (count: number) => {
      const target = intervalsChecked + count;
      await waitFor(`${count} intervals`, () => intervalsChecked >= target, { intervalMs: 5 });
    };
    const stop = reclaimMemoryWhenIdle({
      started: () => {
        intervalsChecked++;
        return started;
      },
      inFlight: () => inFlight,
      logger,
      intervalMs: 20,
      collect: () => collections++,
      alsoCollect: () => otherCollections++,
    });
    try {
      await intervals(3);
      expect(collections, 'nothing served yet: nothing to give back').toBe(0);
      // Traffic: a request starts in every interval.
      for (let index = 0; index < 5; index++) {
        started++;
        await intervals(1);
      }
      expect(collections).toBe(0);
      // A long stream stays open: quiet, but not idle.
      inFlight = 1;
      await intervals(4);
      expect(collections).toBe(0);
      inFlight = 0;
      await waitFor('four collections', () => collections >= 4);
      await intervals(3);
      expect(collections, 'per quiet period: two collections, then one in each of the next two intervals').toBe(4);
      expect(otherCollections, 'the other isolates are collected with each pass').toBe(3);
      started++;
      await waitFor('eight collections', () => collections >= 8);
      await intervals(3);
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
