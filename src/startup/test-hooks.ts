/**
 * Signals a test passes to startGateway (StartOptions.testHooks) to wait for what the server has done instead of
 * sleeping and hoping it was enough. Every hook is optional and production passes none.
 */
export interface TestHooks {
  /** Called after each poll of the access-change feed, once it has finished. */
  afterAccessChangePoll?: () => void;
  /** Called after each tick of the SQLite thread's checkpoint timer, whether it checkpointed or found nothing to do. */
  afterCheckpointTick?: () => void;
  /** Awaited between two batches of retention's deletes, so a test can send requests while old rows are half gone. */
  betweenDeleteBatches?: () => Promise<void>;
}
