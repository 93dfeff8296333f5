import { type ApiError, apiError } from '../../errors/api-error.js';
import type { SlotLease } from './slot-pool.js';

/**
 * Bounds how long a local generation may go without producing anything, as `timeouts.first_byte` and `timeouts.idle`
 * bound an upstream's. node-llama-cpp can leave a generation that never settles (a sampler error that kills its decode
 * loop): unbounded, its client would wait forever and its slot be lost without a word. On a stall the client
 * gets `504 upstream_timeout` and the generation is told to stop; a slot whose generation still does not settle is
 * taken out of service (`SlotLease.retire`), never handed to the next request.
 */

export interface StallTimeouts {
  /** Until the first token (or the first embedding): the prompt's evaluation included. */
  firstTokenMs: number;
  /** The longest silence between two tokens. */
  idleMs: number;
}

/** How long a generation told to stop may take to settle before its slot is retired. */
export const stopGraceMs = 30_000;

export class StallWatchdog {
  /** The error the generation stalled with, once it has. */
  stalledWith: ApiError | undefined;
  private timer: NodeJS.Timeout;
  private producing = false;
  /** The native work being waited for (guard): what must settle before the slot can be reused. */
  private pending: Promise<unknown> | undefined;
  private rejectWaiting: ((error: ApiError) => void) | undefined;

  constructor(
    private readonly timeouts: StallTimeouts,
    private readonly modelName: string,
    private readonly onStall?: (error: ApiError) => void,
  ) {
    this.timer = setTimeout(() => this.stall(), timeouts.firstTokenMs);
    this.timer.unref();
  }

  /** Something was produced: the silence starts again, now bounded by the idle timeout. */
  progress(): void {
    if (this.stalledWith) return;
    if (this.producing) {
      this.timer.refresh();
      return;
    }
    this.producing = true;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.stall(), this.timeouts.idleMs);
    this.timer.unref();
  }

  /** Waits for one step of native work; rejects with the stall's 504 if the watchdog fires first. */
  guard<T>(step: Promise<T>): Promise<T> {
    this.pending = step;
    if (this.stalledWith) return Promise.reject(this.stalledWith);
    return new Promise<T>((resolve, reject) => {
      this.rejectWaiting = reject;
      step.then(
        (value) => {
          this.rejectWaiting = undefined;
          resolve(value);
        },
        (error: unknown) => {
          this.rejectWaiting = undefined;
          reject(error);
        },
      );
    });
  }

  stop(): void {
    clearTimeout(this.timer);
  }

  /**
   * Whether the slot may be used again, once `work` (by default the last guarded step) has settled: a generation told
   * to stop (it stalled, or its reader left) winds down first, so the next request never shares its sequence. False
   * when it has not settled `stopGraceMs` after.
   */
  async slotReusable(work: Promise<unknown> | undefined = this.pending): Promise<boolean> {
    this.stop();
    if (work === undefined) return true;
    let timer: NodeJS.Timeout | undefined;
    const gaveUp = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), stopGraceMs);
    });
    const settled = work.then(
      () => true as const,
      () => true as const,
    );
    try {
      return await Promise.race([settled, gaveUp]);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Hands the slot back to its pool, or retires it when it is not reusable (slotReusable). Resolves once that is done,
   * except after a stall: then the client is answered at once and the slot follows within stopGraceMs.
   */
  returnSlot(lease: SlotLease<unknown>, work?: Promise<unknown>): Promise<void> {
    const done = this.slotReusable(work).then((reusable) => (reusable ? lease.release() : lease.retire()));
    return this.stalledWith ? Promise.resolve() : done;
  }

  private stall(): void {
    const bound = spelledDuration(this.producing ? this.timeouts.idleMs : this.timeouts.firstTokenMs);
    const error = apiError(
      'upstream_timeout',
      this.producing
        ? `The local model ${this.modelName} produced nothing for ${bound} and was stopped.`
        : `The local model ${this.modelName} produced no output within ${bound} and was stopped.`,
    );
    this.stalledWith = error;
    this.rejectWaiting?.(error);
    this.rejectWaiting = undefined;
    this.onStall?.(error);
  }
}

function spelledDuration(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Math.round(ms / 1000)} s`;
}
