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
  kind: 'admit' | 'settle' | 'admitted' | 'refused' | 'settled';
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
    { resolve: (admission: Admission) => void; reject: (error: unknown) => void }
  >();
  /** Settlements waiting for the primary's word that its counters have them. */
  private readonly settling = new Map<number, () => void>();
  private readonly onMessage = (message: unknown) => {
    if (!isLimiterMessage(message)) return;
    if (message.kind === 'settled') {
      this.settling.get(message.id)?.();
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
      shared: true,
      settle: (actual) => {
        if (settled) return;
        settled = true;
        return this.settle(id, actual);
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
   * Sends the settlement and waits for the primary's answer: messages of different workers reach the primary in no set
   * order, so without the wait a client's next request, served by another worker, could find the last one's slot and
   * reservation still counted. A primary that does not answer within a second is not waited for longer.
   */
  private settle(id: number, actual: Usage): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.settling.delete(id);
        resolve();
      };
      const timer = setTimeout(done, 1000);
      this.settling.set(id, done);
      this.send({ channel: 'switchboard-limiter', id, kind: 'settle', actual });
    });
  }

  admit(request: AdmissionRequest): Promise<Admission> {
    if (request.subjects.length === 0) return Promise.resolve(admittedWithoutLimits);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.send({ channel: 'switchboard-limiter', id, kind: 'admit', request });
    });
  }

  async close(): Promise<void> {
    this.channel.off('message', this.onMessage);
    for (const waiter of this.pending.values()) waiter.reject(new Error('the limiter was closed'));
    this.pending.clear();
    for (const done of [...this.settling.values()]) done();
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
      const id = message.id;
      const settled = admissions.get(id)?.settle(message.actual ?? { tokens: 0, costUsd: 0 });
      admissions.delete(id);
      void Promise.resolve(settled).then(() => send({ channel: 'switchboard-limiter', id, kind: 'settled' }));
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
