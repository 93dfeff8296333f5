import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Logger } from '../observability/logger.js';

/**
 * Gives memory back after a burst of traffic. V8 collects garbage when JavaScript allocates, so a process that goes
 * quiet after heavy load keeps the heap it grew (tens of megabytes) until the next request: its resident size
 * does not return to where it was. Here, once the data plane has been quiet for a whole interval (no request
 * started, none in flight) after serving some, full, compacting collections run, and once more in each of the
 * next two intervals if it stays quiet; V8 then releases the emptied pages (the SQLite worker thread is asked to do the same). It
 * never runs under load or while a stream is open, and at most three times per quiet period.
 */

export interface IdleMemoryReclaimOptions {
  /** Requests started so far (a counter that only grows). */
  started: () => number;
  inFlight: () => number;
  logger: Logger;
  intervalMs?: number;
  /** The collection to run (tests pass their own); V8's full collection by default. */
  collect?: () => void;
  /** Other isolates to collect at the same moment (the SQLite worker thread: its heap grows with the batches). */
  alsoCollect?: () => void;
}

/** V8's full collection, obtained without starting node with --expose-gc (the flag is only read by new contexts). */
export function fullCollection(): (() => void) | undefined {
  try {
    setFlagsFromString('--expose-gc');
    return runInNewContext('gc') as () => void;
  } catch {
    return undefined;
  }
}

/** The first pass collects twice; the others once, an interval apart. */
const passesPerQuietPeriod = 3;

export function reclaimMemoryWhenIdle(options: IdleMemoryReclaimOptions): () => void {
  const collect = options.collect ?? fullCollection();
  if (!collect) return () => {};
  let seen = options.started();
  // Passes still to run in the current quiet period (see below).
  let passesLeft = 0;
  const timer = setInterval(() => {
    const started = options.started();
    if (started !== seen) {
      seen = started;
      passesLeft = passesPerQuietPeriod;
      return;
    }
    if (passesLeft === 0 || options.inFlight() > 0) return;
    passesLeft--;
    const before = process.memoryUsage();
    const startedAt = performance.now();
    if (passesLeft === passesPerQuietPeriod - 1) {
      // Twice: the second collection compacts what the first one's sweeping freed (docs/performance.md#idle-memory).
      collect();
      collect();
    } else {
      // Then once per interval while it stays quiet: V8 shrinks its young generation only when a collection finds the
      // allocation rate low, and the rate it computes still includes the load for a while.
      collect();
    }
    options.alsoCollect?.();
    const after = process.memoryUsage();
    options.logger.debug(
      {
        pass: passesPerQuietPeriod - passesLeft,
        ms: Math.round(performance.now() - startedAt),
        heapMb: Math.round(after.heapTotal / 1048576),
        freedHeapMb: Math.round((before.heapTotal - after.heapTotal) / 1048576),
        rssMb: Math.round(after.rss / 1048576),
      },
      'quiet after traffic: memory given back',
    );
  }, options.intervalMs ?? 5000);
  timer.unref();
  return () => clearInterval(timer);
}
