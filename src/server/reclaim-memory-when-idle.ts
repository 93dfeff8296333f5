import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Logger } from '../observability/logger.js';

/**
 * Gives memory back after a burst of traffic. V8 collects garbage when JavaScript allocates, so a process that goes
 * quiet after heavy load keeps the heap it grew (tens of megabytes) until the next request: its resident size
 * does not return to where it was. Here, once the data plane has been quiet for a whole interval (no request
 * started, none in flight) after serving some, one full, compacting collection runs; V8 then releases the
 * emptied pages (the SQLite worker thread is asked to do the same). It never runs under load or while a stream is open, and at most once per quiet period.
 */

export interface IdleMemoryReclaimOptions {
  /** Requests started so far (a counter that only grows). */
  started: () => number;
  inFlight: () => number;
  logger: Logger;
  intervalMs?: number;
  /** The collection to run (tests pass their own); V8's full collection by default. */
  collect?: () => void;
  /**
   * Other isolates to collect at the same moment (the SQLite worker thread: its heap grows with the batches it
   * receives and, measured, gives back ~9 MB of resident memory after a load).
   */
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

export function reclaimMemoryWhenIdle(options: IdleMemoryReclaimOptions): () => void {
  const collect = options.collect ?? fullCollection();
  if (!collect) return () => {};
  let seen = options.started();
  let servedSinceCollection = false;
  const timer = setInterval(() => {
    const started = options.started();
    if (started !== seen) {
      seen = started;
      servedSinceCollection = true;
      return;
    }
    if (!servedSinceCollection || options.inFlight() > 0) return;
    servedSinceCollection = false;
    const before = process.memoryUsage();
    const startedAt = performance.now();
    // Twice: the second collection compacts what the first one's sweeping freed (measured: ~20 MB more given back
    // on a process pinned to one core, where V8's concurrent sweeper lags).
    collect();
    collect();
    options.alsoCollect?.();
    const after = process.memoryUsage();
    options.logger.debug(
      {
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
