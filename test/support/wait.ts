import { connect } from 'node:net';

/**
 * Waiting for a condition instead of sleeping. The deadline only fails a stuck test (it is generous on purpose, for a
 * loaded machine); a passing run never waits for it.
 */

/** The default deadline of a wait: long enough for a loaded machine, so reaching it means the test is stuck. */
export const stuckTestDeadlineMs = 15_000;

export interface WaitOptions {
  /** How long before giving up with an error (default 15 s). */
  timeoutMs?: number;
  /** Pause between probes (default 50 ms). */
  intervalMs?: number;
}

/**
 * Resolves with the first value of `probe` that is not `undefined`, `null` or `false`; throws after the deadline with
 * `what` and the last value or error seen.
 */
export async function waitFor<T>(
  what: string,
  probe: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  options: WaitOptions = {},
): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? stuckTestDeadlineMs);
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== null && value !== false) return value;
      last = value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what} (last: ${describe(last)})`);
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 50));
  }
}

function describe(value: unknown): string {
  if (value instanceof Error) return value.message;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** Whether a TCP connection to `url`'s host and port is refused (nothing listens) rather than accepted. */
export function isRefused(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port) });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });
}

/** Resolves once nothing listens at `url` any more (a server that was stopped or killed has let go of its port). */
export function waitUntilRefused(url: string, options: WaitOptions = {}): Promise<true> {
  return waitFor(`${url} to refuse connections`, () => isRefused(url), options);
}
