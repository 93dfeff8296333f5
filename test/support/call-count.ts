import { type WaitOptions, waitFor } from './wait.js';

/**
 * Counts the calls of a hook the server calls when it has done something (src/startup/test-hooks.ts), so a test waits
 * for that many of them instead of sleeping for the time they should take: a loaded machine makes it wait longer,
 * never see fewer.
 */
export interface CallCount {
  /** The function to pass as the hook. */
  readonly hook: () => void;
  readonly calls: number;
  /** Resolves once the hook has been called `count` more times than when this was asked. */
  more(count: number, options?: WaitOptions): Promise<void>;
}

export function callCount(what: string): CallCount {
  let calls = 0;
  return {
    hook: () => {
      calls++;
    },
    get calls() {
      return calls;
    },
    async more(count, options = {}) {
      const target = calls + count;
      await waitFor(`${count} more ${what}`, () => calls >= target, { intervalMs: 10, ...options });
    },
  };
}
