/**
 * Test-only hooks into a running gateway. Production passes none: `serve` builds them from the environment only with
 * NODE_ENV=test, and in-process tests pass them to `startGateway` themselves.
 */
export interface TestHooks {
  /** The clock of deployment health (ejections, cooldowns, outcome windows), so a test can move it by hand. */
  healthClock?: () => number;
  /** Headers added to every upstream request, so a mock upstream can tell which process sent it. */
  upstreamHeaders?: Record<string, string>;
}

/**
 * With NODE_ENV=test and SWITCHBOARD_TEST_WORKER_HEADER naming a header, every upstream request of this process carries
 * that header with the process id as its value (the worker of `serve --workers` that sent it).
 */
export function testHooksFromEnvironment(env: NodeJS.ProcessEnv = process.env): TestHooks {
  if (env.NODE_ENV !== 'test') return {};
  const hooks: TestHooks = {};
  const workerHeader = env.SWITCHBOARD_TEST_WORKER_HEADER;
  if (workerHeader) hooks.upstreamHeaders = { [workerHeader.toLowerCase()]: String(process.pid) };
  return hooks;
}
