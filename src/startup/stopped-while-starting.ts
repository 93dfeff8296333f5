/**
 * Thrown by startGateway when a stop signal arrived while it was starting and it stopped before listening: the caller
 * exits cleanly (0) rather than reporting a failed start. What had been opened is closed by then.
 */
export class StoppedWhileStarting extends Error {
  constructor(readonly signal: string) {
    super(`stopped by ${signal} before listening`);
    this.name = 'StoppedWhileStarting';
  }
}
