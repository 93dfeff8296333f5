import { type ApiError, apiError } from '../../errors/api-error.js';
import type { CancelSignal } from '../../server/cancellation.js';

/**
 * A fixed set of generation slots (one per context sequence) and a bounded line of requests waiting for one.
 * A local model has a hard concurrency limit, so the queue must be bounded: an unbounded one turns overload into
 * ever-growing latency and memory instead of a clear answer. When the line is full, or a request waited longer than
 * the queue timeout, the caller gets 503 with a retry-after estimated from how long slots are actually held.
 */

export interface SlotLease<Slot> {
  readonly slot: Slot;
  /** Whose request used the slot last (undefined: nobody, or a caller without an owner). */
  readonly previousOwner: string | undefined;
  /** Returns the slot to the pool (idempotent). */
  release(): void;
}

export interface SlotPoolOptions {
  /** Requests allowed to wait for a slot; 0 means "answer 503 as soon as every slot is busy". */
  queueSize: number;
  queueTimeoutMs: number;
  /** Named in error messages. */
  modelName: string;
}

interface Waiter<Slot> {
  owner: string | undefined;
  resolve(lease: SlotLease<Slot>): void;
  reject(error: unknown): void;
  cleanup(): void;
}

/** How much each new hold time moves the average (exponential moving average). */
const holdTimeWeight = 0.2;
const maxRetryAfterSeconds = 60;

export class SlotPool<Slot> {
  private readonly free: Slot[];
  private readonly waiters: Waiter<Slot>[] = [];
  private readonly owners = new Map<Slot, string | undefined>();
  private averageHoldMs = 2000;
  private closedWith: ApiError | undefined;

  constructor(
    private readonly slots: readonly Slot[],
    private readonly options: SlotPoolOptions,
  ) {
    this.free = [...slots];
  }

  get size(): number {
    return this.slots.length;
  }

  get busy(): number {
    return this.slots.length - this.free.length;
  }

  get waiting(): number {
    return this.waiters.length;
  }

  /** Seconds a client should wait before retrying, from the observed hold times and the line ahead of it. */
  retryAfterSeconds(): number {
    const rounds = Math.ceil((this.waiters.length + 1) / this.slots.length);
    return Math.min(maxRetryAfterSeconds, Math.max(1, Math.ceil((rounds * this.averageHoldMs) / 1000)));
  }

  /**
   * A free slot, preferring one the same owner used last (its prompt state can be reused), else the one free the
   * longest; or a place in the queue.
   */
  acquire(signal: CancelSignal, owner?: string): Promise<SlotLease<Slot>> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    if (signal.aborted) return Promise.reject(cancelled());
    if (this.free.length > 0) {
      const own = owner === undefined ? -1 : this.free.findIndex((slot) => this.owners.get(slot) === owner);
      const [slot] = this.free.splice(own === -1 ? 0 : own, 1);
      if (slot !== undefined) return Promise.resolve(this.lease(slot, owner));
    }
    if (this.waiters.length >= this.options.queueSize) return Promise.reject(this.overloaded('queue_full'));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        remove();
        reject(this.overloaded('queue_timeout'));
      }, this.options.queueTimeoutMs);
      const onAbort = () => {
        remove();
        reject(cancelled());
      };
      const waiter: Waiter<Slot> = {
        owner,
        resolve,
        reject,
        cleanup: () => {
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
        },
      };
      const remove = () => {
        waiter.cleanup();
        const index = this.waiters.indexOf(waiter);
        if (index !== -1) this.waiters.splice(index, 1);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  /** Refuses new requests and fails the waiting ones (shutdown). Slots in use are released by their holders. */
  close(reason: ApiError): void {
    this.closedWith = reason;
    for (const waiter of this.waiters.splice(0)) {
      waiter.cleanup();
      waiter.reject(reason);
    }
  }

  private lease(slot: Slot, owner: string | undefined): SlotLease<Slot> {
    const startedAt = performance.now();
    const previousOwner = this.owners.get(slot);
    this.owners.set(slot, owner);
    let released = false;
    return {
      slot,
      previousOwner,
      release: () => {
        if (released) return;
        released = true;
        const heldMs = performance.now() - startedAt;
        this.averageHoldMs += holdTimeWeight * (heldMs - this.averageHoldMs);
        const next = this.waiters.shift();
        if (next) {
          next.cleanup();
          next.resolve(this.lease(slot, next.owner));
        } else {
          this.free.push(slot);
        }
      },
    };
  }

  private overloaded(reason: 'queue_full' | 'queue_timeout'): ApiError {
    const seconds = this.retryAfterSeconds();
    const detail =
      reason === 'queue_full'
        ? `all ${this.slots.length} generation slots are busy and ${this.options.queueSize} requests are already waiting`
        : `no generation slot became free within ${Math.round(this.options.queueTimeoutMs / 1000)} s`;
    return apiError(
      'model_overloaded',
      `That model is currently overloaded with other requests (${this.options.modelName}: ${detail}). You can retry your request in ${seconds} s.`,
      { headers: { 'retry-after': String(seconds), 'retry-after-ms': String(seconds * 1000) } },
    );
  }
}

export function cancelled(): ApiError {
  return apiError('client_closed_request', 'The request was cancelled.');
}
