/**
 * Test-only hooks into a running gateway: a clock to move by hand, and signals to wait for what the server has done
 * instead of sleeping. Production passes none: `serve` builds them from the environment only with NODE_ENV=test, and
 * in-process tests pass them to `startGateway` (StartOptions.testHooks) themselves.
 */
export interface TestHooks {
  /** The clock of deployment health (ejections, cooldowns, outcome windows), so a test can move it by hand. */
  healthClock?: () => number;
  /** Headers added to every upstream request, so a mock upstream can tell which process sent it. */
  upstreamHeaders?: Record<string, string>;
  /** Called after each poll of the access-change feed, once it has finished. */
  afterAccessChangePoll?: () => void;
  /** Called after each tick of the SQLite thread's checkpoint timer, whether it checkpointed or found nothing to do. */
  afterCheckpointTick?: () => void;
  /** Awaited between two batches of retention's deletes, so a test can send requests while old rows are half gone. */
  betweenDeleteBatches?: () => Promise<void>;
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
