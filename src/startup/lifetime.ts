import type { Logger } from '../observability/logger.js';

/**
 * The services of a running gateway in the order they were started, closed in reverse: whatever was built last
 * (the HTTP server) stops first, the database last. Each closer gets the shutdown's deadline; one that fails is
 * logged and the others still run.
 */

/** Closes a service, given the service and the shutdown's deadline (Date.now() milliseconds). */
export type Closer<Value> = (value: Value, deadline: number) => unknown;

export class Lifetime {
  private readonly closers: Array<{ name: string; close: (deadline: number) => unknown }> = [];
  private closing: Promise<void> | undefined;

  constructor(private readonly logger: Logger) {}

  /** Registers what closes a service; returns `value`, so a service can be built and registered in one line. */
  add<Value>(name: string, value: Value, close: Closer<Value>): Value {
    this.closers.push({ name, close: (deadline) => close(value, deadline) });
    return value;
  }

  /** Closes everything registered, last first (once; later calls wait for the same shutdown). */
  close(deadline: number): Promise<void> {
    this.closing ??= this.closeAll(deadline);
    return this.closing;
  }

  private async closeAll(deadline: number): Promise<void> {
    for (const { name, close } of this.closers.splice(0).reverse()) {
      try {
        await close(deadline);
      } catch (error) {
        this.logger.warn({ err: error, service: name }, 'a service failed to close; shutdown goes on');
      }
    }
  }
}
