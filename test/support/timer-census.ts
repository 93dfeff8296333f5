/**
 * Keeps track of the timers made through the global `setTimeout`/`setInterval` from `startTimerCensus()` on, with
 * where each was made, so a test can check that none it caused is left keeping the process busy, and name the one
 * that is. Timers made before the census, or unref'd, are not counted (a count of `getActiveResourcesInfo()` against
 * a baseline would be: one pending at the start and done at the end hides a leak).
 */
export interface TimerCensus {
  /** The creation stacks of the ref'd timers made since the census began and still pending. */
  running(): string[];
  stop(): void;
}

export function startTimerCensus(): TimerCensus {
  const made = new Map<NodeJS.Timeout, string>();
  const originalTimeout = globalThis.setTimeout;
  const originalInterval = globalThis.setInterval;
  const remember = (timer: NodeJS.Timeout) => {
    made.set(timer, new Error('timer made').stack ?? '');
    return timer;
  };
  const patchedTimeout = (...args: Parameters<typeof setTimeout>) => remember(originalTimeout(...args));
  const patchedInterval = (...args: Parameters<typeof setInterval>) => remember(originalInterval(...args));
  globalThis.setTimeout = Object.assign(patchedTimeout, originalTimeout) as typeof setTimeout;
  globalThis.setInterval = Object.assign(patchedInterval, originalInterval) as typeof setInterval;
  return {
    running: () => {
      const live: string[] = [];
      for (const [timer, stack] of made) {
        // A fired one-shot timer, or a cleared one, is done for good (Node marks it destroyed): forget it.
        if ((timer as unknown as { _destroyed?: boolean })._destroyed === true) made.delete(timer);
        else if (timer.hasRef()) live.push(stack);
      }
      return live;
    },
    stop: () => {
      globalThis.setTimeout = originalTimeout;
      globalThis.setInterval = originalInterval;
    },
  };
}
