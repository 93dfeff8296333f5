import { type ApiError, apiError } from '../../errors/api-error.js';
import { FairQueue } from '../../limits/fair-queue.js';
import type { CancelSignal } from '../../server/cancellation.js';

/**
 * A fixed set of generation slots (one per context sequence) and a bounded queue of requests waiting for one.
 * A local model has a hard concurrency limit, so the queue must be bounded: an unbounded one turns overload into
 * ever-growing latency and memory instead of a clear answer. Each account waits in a lane of its own and the lanes
 * are served in turn (fair-queue.ts), so a flood from one account slows that account, not the others. An account
 * may have `queuePerAccount` requests waiting; when the whole queue (`queueSize`) is full, a newcomer with fewer
 * waiting than the longest lane takes the place of that lane's newest request. The one refused (its lane full, or
 * the longest) gets 503 with a retry-after estimated from how long slots are actually held; so does a request that
 * waited longer than the queue timeout.
 */

export interface SlotLease<Slot> {
  readonly slot: Slot;
  /** Whose request used the slot last (undefined: nobody, or a caller without an owner). */
  readonly previousOwner: string | undefined;
  /** Returns the slot to the pool (idempotent). */
  release(): void;
  /**
   * Takes the slot out of service for good, instead of returning it: its generation never stopped
   * (stall-watchdog.ts), so no later request may share its sequence.
   */
  retire(): void;
}

export interface SlotPoolOptions {
  /** Requests allowed to wait for a slot; 0 means "answer 503 as soon as every slot is busy". */
  queueSize: number;
  /** Requests one account may have waiting (its lane); at most `queueSize`. */
  queuePerAccount: number;
  queueTimeoutMs: number;
  /** Named in error messages. */
  modelName: string;
  /** Told each time a slot is retired, with how many are out of service now. */
  onRetired?: (retired: number) => void;
}

interface Waiter<Slot> {
  owner: string | undefined;
  lane: string;
  resolve(lease: SlotLease<Slot>): void;
  reject(error: unknown): void;
  cleanup(): void;
}

/** How much each new hold time moves the average (exponential moving average). */
const holdTimeWeight = 0.2;
const maxRetryAfterSeconds = 60;

export class SlotPool<Slot> {
  private readonly free: Slot[];
  private readonly waiters = new FairQueue<Waiter<Slot>>();
  private readonly owners = new Map<Slot, string | undefined>();
  private averageHoldMs = 2000;
  private closedWith: ApiError | undefined;
  private retiredCount = 0;

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
    return this.waiters.size;
  }

  /** Slots taken out of service (counted in `busy` too). */
  get retired(): number {
    return this.retiredCount;
  }

  /**
   * Seconds a client should wait before retrying, from the observed hold times and the requests ahead of it: in
   * its own lane, each of which waits for a turn of every lane.
   */
  retryAfterSeconds(owner?: string): number {
    const size = this.waiters.size;
    const ahead =
      owner === undefined
        ? size
        : Math.min(size, this.waiters.laneLength(laneOf(owner)) * Math.max(1, this.waiters.activeLanes));
    const rounds = Math.ceil((ahead + 1) / this.slots.length);
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
    const lane = laneOf(owner);
    const refusal = this.makeRoom(lane);
    if (refusal) return Promise.reject(refusal);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        remove();
        reject(this.overloaded('queue_timeout', lane));
      }, this.options.queueTimeoutMs);
      const onAbort = () => {
        remove();
        reject(cancelled());
      };
      const waiter: Waiter<Slot> = {
        owner,
        lane,
        resolve,
        reject,
        cleanup: () => {
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
        },
      };
      const remove = () => {
        waiter.cleanup();
        this.waiters.remove(lane, waiter);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(lane, waiter);
    });
  }

  /**
   * Whether a request of this lane may wait: its lane has room, and so has the queue, or a longer lane gives up its
   * newest request for it. Returns the refusal otherwise.
   */
  private makeRoom(lane: string): ApiError | undefined {
    const own = this.waiters.laneLength(lane);
    const perAccount = Math.min(this.options.queuePerAccount, this.options.queueSize);
    if (own >= perAccount) {
      // A lane as long as the whole queue is the whole queue.
      return this.overloaded(perAccount >= this.options.queueSize ? 'queue_full' : 'lane_full', lane);
    }
    if (this.waiters.size < this.options.queueSize) return undefined;
    const longest = this.waiters.longestLane(own + 1);
    if (longest === undefined) return this.overloaded('queue_full', lane);
    const displaced = this.waiters.popNewest(longest);
    if (displaced) {
      displaced.cleanup();
      displaced.reject(this.overloaded('displaced', longest));
    }
    return undefined;
  }

  /** Refuses new requests and fails the waiting ones (shutdown). Slots in use are released by their holders. */
  close(reason: ApiError): void {
    this.closedWith = reason;
    for (const waiter of this.waiters.drain()) {
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
      retire: () => {
        if (released) return;
        released = true;
        this.retiredCount++;
        this.options.onRetired?.(this.retiredCount);
        if (this.retiredCount === this.slots.length) {
          this.close(
            apiError(
              'model_unavailable',
              `The local model ${this.options.modelName} has no generation slot left in service: its generations stopped responding. An operator must restart the server.`,
            ),
          );
        }
      },
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

  private overloaded(reason: 'queue_full' | 'lane_full' | 'displaced' | 'queue_timeout', lane: string): ApiError {
    const seconds = this.retryAfterSeconds(lane);
    const waiting = `all ${this.slots.length} generation slots are busy and`;
    const perAccount = Math.min(this.options.queuePerAccount, this.options.queueSize);
    const details = {
      queue_full: `${waiting} ${this.options.queueSize} requests are already waiting`,
      lane_full: `${waiting} ${perAccount} requests of this account are already waiting, the most one account may queue`,
      displaced: `${waiting} this account had the most requests waiting when the queue filled up`,
      queue_timeout: `no generation slot became free within ${Math.round(this.options.queueTimeoutMs / 1000)} s`,
    };
    return apiError(
      'model_overloaded',
      `That model is currently overloaded with other requests (${this.options.modelName}: ${details[reason]}). You can retry your request in ${seconds} s.`,
      { headers: { 'retry-after': String(seconds), 'retry-after-ms': String(seconds * 1000) } },
    );
  }
}

/** Requests without an owner share one lane. */
function laneOf(owner: string | undefined): string {
  return owner ?? '';
}

export function cancelled(): ApiError {
  return apiError('client_closed_request', 'The request was cancelled.');
}
