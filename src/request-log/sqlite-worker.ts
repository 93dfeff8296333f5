import { Worker } from 'node:worker_threads';
import type { ResponseRecord } from '../db/repositories/responses.js';
import type { RowBatchMessage } from './row-batch.js';
import type { SqliteThreadData, SqliteThreadReply, SqliteThreadRequest } from './sqlite-worker-thread.js';

/**
 * Starts the SQLite worker thread (sqlite-worker-thread.ts) and talks to it. better-sqlite3 is synchronous, so a
 * batch inserted on the event loop would stall every request for its duration; the main thread only posts the batch
 * as it holds it (row-batch.ts). If the thread dies, writes fail (the request-log writer keeps the rows and retries)
 * and `alive` turns false so the caller can write on the main thread instead.
 */

export interface SqliteWorker {
  /** False once the thread has died (then write on the main thread instead). */
  readonly alive: boolean;
  /** Inserts a batch of rows and moves its keys' last-used times, in one transaction. */
  write(batch: RowBatchMessage): Promise<void>;
  /** Stores a batch of `/v1/responses` answers (responses-sqlite-writer.ts), in one transaction. */
  writeResponses(records: readonly ResponseRecord[]): Promise<void>;
  /** Runs a full garbage collection on the thread (when the server has gone quiet; see reclaim-memory-when-idle.ts). */
  collectGarbage(): void;
  /** Finishes pending writes, checkpoints, closes the connection and ends the thread. */
  close(): Promise<void>;
}

export interface SqliteWorkerOptions {
  file: string;
  checkpointIntervalMs?: number;
  /** Called after each tick of the thread's checkpoint timer (a test counts them: startup/test-hooks.ts). */
  afterCheckpointTick?: (() => void) | undefined;
  onError: (message: string) => void;
}

/**
 * The thread's code, next to this file in each form the server runs in: dist/bundle/ (rolldown.config.mjs builds it
 * as an entry of its own) and tsc's dist/. Under vitest this file is src/request-log/sqlite-worker.ts and the thread's
 * source is TypeScript, which Node 20 cannot load in a worker: a one-line module imports it through tsx's loader.
 */
function threadEntry(): URL {
  const here = import.meta.url;
  if (!here.endsWith('.ts')) return new URL('./sqlite-worker-thread.js', here);
  const source = JSON.stringify(new URL('./sqlite-worker-thread.ts', here).href);
  const loader = JSON.stringify(import.meta.resolve('tsx/esm/api'));
  const bootstrap = `import { tsImport } from ${loader}; await tsImport(${source}, ${source});`;
  return new URL(`data:text/javascript,${encodeURIComponent(bootstrap)}`);
}

export function startSqliteWorker(options: SqliteWorkerOptions): SqliteWorker {
  const workerData: SqliteThreadData = {
    file: options.file,
    checkpointIntervalMs: options.checkpointIntervalMs ?? 1000,
    reportCheckpointTicks: options.afterCheckpointTick !== undefined,
  };
  const worker = new Worker(threadEntry(), { workerData });
  const post = (request: SqliteThreadRequest) => worker.postMessage(request);
  // Only pending writes keep the process alive (see write()).
  worker.unref();
  let alive = true;
  let nextId = 1;
  const pending = new Map<number, { resolve: () => void; reject: (error: Error) => void }>();
  const failAll = (reason: string) => {
    for (const { reject } of pending.values()) reject(new Error(reason));
    pending.clear();
  };
  worker.on('message', (reply: SqliteThreadReply) => {
    if (reply.type === 'checkpoint-failed') options.onError(`checkpoint failed: ${reply.error}`);
    if (reply.type === 'checkpoint-tick') options.afterCheckpointTick?.();
    if (reply.type !== 'written' && reply.type !== 'failed') return;
    const waiter = pending.get(reply.id);
    pending.delete(reply.id);
    if (pending.size === 0) worker.unref();
    if (!waiter) return;
    if (reply.type === 'written') waiter.resolve();
    else waiter.reject(Object.assign(new Error(reply.error), { code: reply.code }));
  });
  const send = (request: (id: number) => SqliteThreadRequest): Promise<void> => {
    if (!alive) return Promise.reject(new Error('the SQLite worker thread has stopped'));
    const id = nextId++;
    return new Promise<void>((resolve, reject) => {
      pending.set(id, { resolve, reject });
      // While a write is pending the thread must keep the process alive, or its answer could be lost at exit.
      worker.ref();
      post(request(id));
    });
  };
  worker.on('error', (error) => {
    options.onError(`the SQLite worker thread failed: ${error.message}`);
  });
  worker.on('exit', () => {
    alive = false;
    failAll('the SQLite worker thread has stopped');
  });

  return {
    get alive() {
      return alive;
    },
    write(batch) {
      return send((id) => ({ type: 'write', id, batch }));
    },
    writeResponses(records) {
      return send((id) => ({ type: 'write-responses', id, records }));
    },
    collectGarbage() {
      if (alive) post({ type: 'collect' });
    },
    close: () =>
      new Promise((resolve) => {
        if (!alive) {
          resolve();
          return;
        }
        worker.once('exit', () => resolve());
        worker.on('message', (reply: SqliteThreadReply) => {
          if (reply.type === 'stopped') void worker.terminate();
        });
        // Messages are handled in order: writes posted before this one finish first. Until the thread has stopped
        // (its last checkpoint done) it keeps the process alive.
        worker.ref();
        post({ type: 'stop' });
        setTimeout(() => void worker.terminate(), 5000).unref();
      }),
  };
}
