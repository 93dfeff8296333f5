import { connect } from 'node:net';

/**
 * Waiting for a condition instead of sleeping: the condition is polled until it holds, and the deadline is generous
 * because it exists only to fail a stuck test, never to measure how fast something happened.
 */

export const stuckTestDeadlineMs = 15_000;

/** Resolves with the first truthy value `condition` returns; throws, naming `what`, if none comes by the deadline. */
export async function waitFor<T>(
  what: string,
  condition: () => T | Promise<T>,
  options: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<NonNullable<T>> {
  const deadline = Date.now() + (options.timeoutMs ?? stuckTestDeadlineMs);
  let lastError: unknown;
  for (;;) {
    try {
      const value = await condition();
      if (value) return value as NonNullable<T>;
      lastError = undefined;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      const reason = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
      throw new Error(`timed out waiting for ${what}${reason}`);
    }
    await new Promise((resolve) => setTimeout(resolve, options.intervalMs ?? 20));
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
export function waitUntilRefused(url: string, options: { timeoutMs?: number } = {}): Promise<boolean> {
  return waitFor(`${url} to refuse connections`, () => isRefused(url), options);
}
