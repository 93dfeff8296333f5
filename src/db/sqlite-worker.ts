import { Worker } from 'node:worker_threads';
import {
  requestLogColumns,
  requestLogInsertSql,
  sqliteRowsPerInsert,
  touchLastUsedSql,
} from './repositories/request-log.js';

/**
 * A worker thread with its own connection to the SQLite file, doing the two kinds of writes that would otherwise
 * stall the event loop (better-sqlite3 is synchronous):
 *
 * - **Request-log batches.** A batch of 500 rows takes 10–15 ms to insert with the console's indexes; on the event
 *   loop that was every request's p99 at concurrency 1. Here the main thread only turns rows into arrays of values
 *   and posts them; the insert (and each key's last-used time) runs in one transaction on this thread.
 * - **Checkpoints.** SQLite in WAL mode appends every commit to the -wal file; a checkpoint copies those pages back
 *   into the database and fsyncs it. Left to SQLite, that happens inside whichever commit crosses the threshold, so
 *   automatic checkpoints are off on both connections and this thread checkpoints every second instead.
 *
 * If the thread dies, writes fail (the request-log writer keeps the rows and retries) and `alive` turns false so the
 * caller can write on the main thread instead.
 */

const workerSource = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const database = new Database(workerData.file);
database.pragma('busy_timeout = 5000');
database.pragma('synchronous = NORMAL');
database.pragma('foreign_keys = ON');
database.pragma('wal_autocheckpoint = 0');
// SQLite's own default page cache (2 MB), not better-sqlite3's 16 MB: appends touch only the right edge of each index,
// and the larger cache filled up under load and stayed resident (~20 MB of this thread's malloc arena).
database.pragma('cache_size = -2000');
// Each 50-row INSERT keeps a statement journal (to undo just that statement if a row is refused) and SQLite spills
// one larger than 64 KB to a temporary file: ~1 write per row to a file deleted afterwards. In memory it costs the
// few pages one statement touches.
database.pragma('temp_store = MEMORY');
const width = workerData.columns;
const manyWidth = width * workerData.rowsPerInsert;
let insertOne;
let insertMany;
let touch;
let writeAll;
function prepare() {
  insertOne = database.prepare(workerData.insertOneSql);
  insertMany = database.prepare(workerData.insertManySql);
  touch = database.prepare(workerData.touchSql);
  writeAll = database.transaction((values, lastUse) => {
    // One flat array for the whole batch (one cheap structured clone instead of one per row), inserted
    // rowsPerInsert rows per statement, the remainder one by one.
    let start = 0;
    for (; start + manyWidth <= values.length; start += manyWidth) insertMany.run(values.slice(start, start + manyWidth));
    for (; start < values.length; start += width) insertOne.run(values.slice(start, start + width));
    for (const [keyId, at] of lastUse) touch.run(at, keyId, at);
  });
}
// V8's full collection without --expose-gc (the flag is only read by new contexts); see reclaim-memory-when-idle.ts.
let collectGarbage;
function fullCollection() {
  try {
    require('node:v8').setFlagsFromString('--expose-gc');
    return require('node:vm').runInNewContext('gc');
  } catch {
    return undefined;
  }
}
let runs = 0;
const timer = setInterval(() => {
  try {
    // PASSIVE never waits for readers or writers; every minute a TRUNCATE also resets the -wal file's size.
    database.pragma(++runs % 60 === 0 ? 'wal_checkpoint(TRUNCATE)' : 'wal_checkpoint(PASSIVE)');
  } catch (error) {
    parentPort.postMessage({ checkpointError: String(error && error.message) });
  }
}, workerData.checkpointIntervalMs);
parentPort.on('message', (message) => {
  if (message.type === 'write') {
    try {
      if (!writeAll) prepare();
      writeAll(message.values, message.lastUse);
      parentPort.postMessage({ id: message.id });
    } catch (error) {
      parentPort.postMessage({ id: message.id, error: String((error && error.message) || error), code: error && error.code });
    }
    return;
  }
  if (message.type === 'collect') {
    // Asked when the server has gone quiet: this thread's heap grew with the batches it received, and like the main
    // thread's it is only collected when JavaScript allocates here again.
    collectGarbage ??= fullCollection();
    if (collectGarbage) { collectGarbage(); collectGarbage(); }
    return;
  }
  if (message.type === 'stop') {
    clearInterval(timer);
    try { database.pragma('wal_checkpoint(TRUNCATE)'); } catch {}
    database.close();
    parentPort.postMessage({ stopped: true });
  }
});
`;

export interface SqliteWorker {
  /** False once the thread has died (then write on the main thread instead). */
  readonly alive: boolean;
  /**
   * Inserts rows, given as one flat array of every row's values in requestLogColumns order, and moves keys' last-used times,
   * in one transaction.
   */
  write(values: unknown[], lastUse: ReadonlyMap<string, number>): Promise<void>;
  /** Runs a full garbage collection on the thread (when the server has gone quiet; see reclaim-memory-when-idle.ts). */
  collectGarbage(): void;
  /** Finishes pending writes, checkpoints, closes the connection and ends the thread. */
  close(): Promise<void>;
}

interface Reply {
  id?: number;
  error?: string;
  code?: string;
  checkpointError?: string;
  stopped?: boolean;
}

export interface SqliteWorkerOptions {
  file: string;
  /** Path of the better-sqlite3 module (the worker is an eval'd script, so it cannot resolve it relative to us). */
  driverPath: string;
  checkpointIntervalMs?: number;
  onError: (message: string) => void;
}

export function startSqliteWorker(options: SqliteWorkerOptions): SqliteWorker {
  const worker = new Worker(workerSource, {
    eval: true,
    workerData: {
      file: options.file,
      driver: options.driverPath,
      columns: requestLogColumns.length,
      rowsPerInsert: sqliteRowsPerInsert,
      insertOneSql: requestLogInsertSql(1),
      insertManySql: requestLogInsertSql(sqliteRowsPerInsert),
      touchSql: touchLastUsedSql,
      checkpointIntervalMs: options.checkpointIntervalMs ?? 1000,
    },
  });
  // Only pending writes keep the process alive (see write()).
  worker.unref();
  let alive = true;
  let nextId = 1;
  const pending = new Map<number, { resolve: () => void; reject: (error: Error) => void }>();
  const failAll = (reason: string) => {
    for (const { reject } of pending.values()) reject(new Error(reason));
    pending.clear();
  };
  worker.on('message', (reply: Reply) => {
    if (reply.checkpointError) options.onError(`checkpoint failed: ${reply.checkpointError}`);
    if (reply.id === undefined) return;
    const waiter = pending.get(reply.id);
    pending.delete(reply.id);
    if (pending.size === 0) worker.unref();
    if (!waiter) return;
    if (reply.error === undefined) waiter.resolve();
    else waiter.reject(Object.assign(new Error(reply.error), { code: reply.code }));
  });
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
    write(values, lastUse) {
      if (!alive) return Promise.reject(new Error('the SQLite worker thread has stopped'));
      const id = nextId++;
      return new Promise<void>((resolve, reject) => {
        pending.set(id, { resolve, reject });
        // While a write is pending the thread must keep the process alive, or its answer could be lost at exit.
        worker.ref();
        worker.postMessage({ type: 'write', id, values, lastUse });
      });
    },
    collectGarbage() {
      if (alive) worker.postMessage({ type: 'collect' });
    },
    close: () =>
      new Promise((resolve) => {
        if (!alive) {
          resolve();
          return;
        }
        worker.once('exit', () => resolve());
        worker.on('message', (reply: Reply) => {
          if (reply.stopped) void worker.terminate();
        });
        // Messages are handled in order: writes posted before this one finish first.
        worker.postMessage({ type: 'stop' });
        setTimeout(() => void worker.terminate(), 5000).unref();
      }),
  };
}
