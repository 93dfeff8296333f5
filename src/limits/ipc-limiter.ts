import { ApiError, type ApiErrorData, apiError, fromApiErrorData, toApiErrorData } from '../errors/api-error.js';
import type { Admission, AdmissionRequest, Limiter, Usage } from './limiter.js';
import { admittedWithoutLimits } from './limiter.js';

/**
 * Limits for `serve --workers N` without Redis: the worker processes ask the primary process, which keeps the one
 * set of counters (a MemoryLimiter), so N workers admit exactly what one process would. Only requests of keys that
 * have limits pay the round trip; with Redis configured, workers use the shared Redis limiter instead.
 */

export interface LimiterMessage {
  channel: 'switchboard-limiter';
  id: number;
  kind: 'admit' | 'settle' | 'admitted' | 'refused' | 'release' | 'released';
  request?: AdmissionRequest;
  actual?: Usage;
  headers?: Record<string, string>;
  error?: ApiErrorData;
}

export function isLimiterMessage(message: unknown): message is LimiterMessage {
  return (message as LimiterMessage | null)?.channel === 'switchboard-limiter';
}

/** The worker's side: a Limiter that forwards to the primary over the cluster IPC channel. */
export class IpcLimiter implements Limiter {
  private nextId = 1;
  private readonly pending = new Map<
    number,
    {
      resolve: (admission: Admission) => void;
      reject: (error: unknown) => void;
      /** Whether the request holds a concurrency slot (its admission then offers releaseSlot). */
      holdsSlot: boolean;
    }
  >();
  /** Slot releases waiting for the primary's word that the slot is free. */
  private readonly releasing = new Map<number, () => void>();
  private readonly onMessage = (message: unknown) => {
    if (!isLimiterMessage(message)) return;
    if (message.kind === 'released') {
      this.releasing.get(message.id)?.();
      return;
    }
    const waiter = this.pending.get(message.id);
    if (!waiter) return;
    this.pending.delete(message.id);
    if (message.kind === 'refused' && message.error) {
      waiter.reject(fromApiErrorData(message.error));
      return;
    }
    const id = message.id;
    let settled = false;
    waiter.resolve({
      headers: message.headers ?? {},
      ...(waiter.holdsSlot ? { releaseSlot: () => this.releaseSlot(id) } : {}),
      settle: (actual) => {
        if (settled) return;
        settled = true;
        this.send({ channel: 'switchboard-limiter', id, kind: 'settle', actual });
      },
    });
  };

  constructor(private readonly channel: NodeJS.Process = process) {
    channel.on('message', this.onMessage);
  }

  private send(message: LimiterMessage): void {
    this.channel.send?.(message);
  }

  /**
   * Asks the primary to free the slot now and waits for its answer: messages of different workers reach the primary in
   * no set order, so without the wait a client's next request, served by another worker, could find the slot taken.
   * A primary that does not answer within a second is not waited for longer (settle frees the slot all the same).
   */
  private releaseSlot(id: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.releasing.delete(id);
        resolve();
      };
      const timer = setTimeout(done, 1000);
      this.releasing.set(id, done);
      this.send({ channel: 'switchboard-limiter', id, kind: 'release' });
    });
  }

  admit(request: AdmissionRequest): Promise<Admission> {
    if (request.subjects.length === 0) return Promise.resolve(admittedWithoutLimits);
    const id = this.nextId++;
    const holdsSlot = request.subjects.some((subject) => subject.limits.concurrentRequests !== null);
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, holdsSlot });
      this.send({ channel: 'switchboard-limiter', id, kind: 'admit', request });
    });
  }

  async close(): Promise<void> {
    this.channel.off('message', this.onMessage);
    for (const waiter of this.pending.values()) waiter.reject(new Error('the limiter was closed'));
    this.pending.clear();
    for (const done of [...this.releasing.values()]) done();
  }
}

/**
 * The primary's side: answers one worker's limiter messages from the shared limiter. `release` settles whatever
 * the worker still held when it exited, so a crashed worker cannot keep concurrency slots forever.
 */
export function serveLimiter(
  limiter: Limiter,
  send: (message: LimiterMessage) => void,
): { onMessage: (message: unknown) => void; release: () => void } {
  const admissions = new Map<number, Admission>();
  const release = () => {
    for (const admission of admissions.values()) admission.settle({ tokens: 0, costUsd: 0 });
    admissions.clear();
  };
  const onMessage = (message: unknown) => {
    if (!isLimiterMessage(message)) return;
    if (message.kind === 'settle') {
      admissions.get(message.id)?.settle(message.actual ?? { tokens: 0, costUsd: 0 });
      admissions.delete(message.id);
      return;
    }
    if (message.kind === 'release') {
      const id = message.id;
      const released = admissions.get(id)?.releaseSlot?.() ?? Promise.resolve();
      void released.then(() => send({ channel: 'switchboard-limiter', id, kind: 'released' }));
      return;
    }
    if (message.kind !== 'admit' || !message.request) return;
    const id = message.id;
    limiter.admit(message.request).then(
      (admission) => {
        admissions.set(id, admission);
        send({ channel: 'switchboard-limiter', id, kind: 'admitted', headers: { ...admission.headers } });
      },
      (error: unknown) => {
        const refusal =
          error instanceof ApiError ? error : apiError('limits_unavailable', 'Limits could not be checked.');
        send({
          channel: 'switchboard-limiter',
          id,
          kind: 'refused',
          error: toApiErrorData(refusal),
        });
      },
    );
  };
  return { onMessage, release };
}
