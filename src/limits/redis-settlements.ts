import type { Redis } from 'ioredis';
import type { Logger } from '../observability/logger.js';

/**
 * Settlements (and take-backs of admissions whose answer never came) on their way to Redis. One that fails (Redis
 * unreachable, or slower than the command timeout) is kept and sent again when the connection is back and on every
 * retry tick, until Redis confirms it: the settle script counts a reservation once however often it is sent, so the
 * counters end up exact after an outage instead of keeping estimates (or whole refused requests) for the rest of the
 * period.
 */

type RedisWithSettle = Redis & {
  switchboardSettle(keys: number, ...args: Array<string | number>): Promise<number>;
};

export interface Settlement {
  keys: string[];
  args: Array<string | number>;
  /**
   * The request's whole cost in micro-dollars, counted if Redis no longer knows its admission (see settleScript);
   * sent with the first attempt only, since a resent settlement may have been counted by an attempt that timed out.
   */
  forgottenCost: number;
}

/** Past this many waiting, the oldest are dropped (logged): a long outage must not grow memory without bound. */
const maxPending = 100_000;

export class SettlementQueue {
  private readonly pending = new Map<string, Settlement>();
  private readonly onReady = () => this.retry();

  constructor(
    private readonly redis: RedisWithSettle,
    private readonly logger: Logger,
  ) {
    redis.on('ready', this.onReady);
  }

  /** Sends a settlement now (resolves when Redis answered it, or failed to); keeps it for a retry if it failed. */
  send(lease: string, settlement: Settlement): Promise<void> {
    return this.attempt(lease, settlement, settlement.forgottenCost);
  }

  /** How many settlements wait for Redis. */
  get waiting(): number {
    return this.pending.size;
  }

  /** Sends every waiting settlement again. */
  retry(): void {
    for (const [lease, settlement] of this.pending) void this.attempt(lease, settlement, 0);
  }

  private attempt(lease: string, settlement: Settlement, forgottenCost: number): Promise<void> {
    const { keys, args } = settlement;
    return this.redis.switchboardSettle(keys.length, ...keys, ...args, forgottenCost).then(
      () => {
        this.pending.delete(lease);
      },
      (error: unknown) => {
        if (!this.pending.has(lease)) {
          this.logger.warn({ err: error }, 'could not settle a request with Redis; retrying when it is back');
          this.keep(lease, settlement);
        }
      },
    );
  }

  private keep(lease: string, settlement: Settlement): void {
    if (this.pending.size >= maxPending) {
      const oldest = this.pending.keys().next().value as string;
      this.pending.delete(oldest);
      this.logger.error('too many settlements waiting for Redis; the oldest was dropped (its estimate stays counted)');
    }
    this.pending.set(lease, settlement);
  }

  close(): void {
    this.redis.off('ready', this.onReady);
  }
}
