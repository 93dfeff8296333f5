import { Worker } from 'node:worker_threads';
import type { RowBatchMessage } from '../request-log/row-batch.js';
import {
  requestLogColumns,
  requestLogInsertSql,
  requestLogLayout,
  requestLogNumberColumns,
  requestLogTextColumns,
  sqliteRowsPerInsert,
  touchLastUsedSql,
} from './repositories/request-log.js';

/**
 * A worker thread with its own connection to the SQLite file, doing the two kinds of writes that would otherwise
 * stall the event loop (better-sqlite3 is synchronous):
 *
 * - **Request-log batches.** A batch of 500 rows takes 10–15 ms to insert with the console's indexes; on the event
 *   loop that was every request's p99 at concurrency 1. Here the main thread only posts the batch as it holds it
 *   (request-log/row-batch.ts: two typed arrays and a list of strings); the rows are rebuilt, inserted, and each
 *   key's last-used time moved, in one transaction on this thread.
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
// and the larger cache filled up under load and stayed resident (~20 MB of this thread's malloc arena). With many
// accounts taking turns the four indexes that start with the account are written in as many places and a larger cache
// helps (100 accounts in turn, in the gateway: +16% throughput with 8 MB), but 8 MB also stayed resident after the
// load (+6 MB RSS, shrink_memory notwithstanding): the inserts are grouped by account instead (insertionOrder, below).
database.pragma('cache_size = -2000');
// Each 50-row INSERT keeps a statement journal (to undo just that statement if a row is refused) and SQLite spills
// one larger than 64 KB to a temporary file: ~1 write per row to a file deleted afterwards. In memory it costs the
// few pages one statement touches.
database.pragma('temp_store = MEMORY');
const width = workerData.columns;
const rowsPerInsert = workerData.rowsPerInsert;
// Per column of the INSERT: 0 for a number column, 1 for a text column, and its place among its kind.
const kinds = Int8Array.from(workerData.layout, (entry) => entry[0]);
const places = Int32Array.from(workerData.layout, (entry) => entry[1]);
const numberWidth = workerData.numberWidth;
const textWidth = workerData.textWidth;
let insertOne;
let insertMany;
let touch;
let writeAll;
// The statements' arguments, reused from batch to batch; passed spread (better-sqlite3 then binds each argument
// directly instead of reading the elements of an array one by one through V8's API: ~0.7 µs less per row).
const manyArguments = new Array(width * rowsPerInsert).fill(null);
const oneArguments = new Array(width).fill(null);
/** Fills target with the rows order[first..first+count-1] of the batch, column by column (see row-batch.ts). */
function fill(target, batch, order, first, count) {
  const { numbers, texts, strings } = batch;
  let at = 0;
  for (let position = first; position < first + count; position++) {
    const row = order[position];
    const numberBase = row * numberWidth;
    const textBase = row * textWidth;
    for (let column = 0; column < width; column++) {
      if (kinds[column] === 0) {
        const value = numbers[numberBase + places[column]];
        target[at++] = value === value ? value : null;
      } else {
        const index = texts[textBase + places[column]];
        target[at++] = index === -1 ? null : strings[index];
      }
    }
  }
}
/**
 * The batch's rows grouped by account, and by key within an account, each group in arrival order. Four of the log's
 * indexes start with the account: rows inserted account by account touch each account's index pages once per batch
 * instead of once per row, and a page stays in SQLite's cache while it is used. Measured on isolated inserts of
 * 500-row batches with 100 accounts taking turns: 35.8 -> 24.2 µs per row (one account: unchanged). Rows of the same
 * account keep their order, so the log's ids still grow with arrival within an account.
 */
function insertionOrder(batch) {
  const count = batch.count;
  const texts = batch.texts;
  const accountPlace = workerData.accountIdPlace;
  const keyPlace = workerData.keyIdPlace;
  const identity = new Int32Array(count);
  let oneAccount = true;
  for (let row = 0; row < count; row++) {
    identity[row] = row;
    if (texts[row * textWidth + accountPlace] !== texts[accountPlace]) oneAccount = false;
  }
  if (oneAccount) return identity;
  // Two stable counting sorts (a text's index in the batch's strings stands for the text): by key, then by account.
  const byKey = countingSort(identity, texts, keyPlace, batch.strings.length);
  return countingSort(byKey, texts, accountPlace, batch.strings.length);
}
function countingSort(rows, texts, place, distinct) {
  const counts = new Int32Array(distinct + 2);
  for (let index = 0; index < rows.length; index++) counts[texts[rows[index] * textWidth + place] + 2]++;
  for (let value = 1; value < counts.length; value++) counts[value] += counts[value - 1];
  const sorted = new Int32Array(rows.length);
  for (let index = 0; index < rows.length; index++) sorted[counts[texts[rows[index] * textWidth + place] + 1]++] = rows[index];
  return sorted;
}
function prepare() {
  insertOne = database.prepare(workerData.insertOneSql);
  insertMany = database.prepare(workerData.insertManySql);
  touch = database.prepare(workerData.touchSql);
  writeAll = database.transaction((batch) => {
    const order = insertionOrder(batch);
    // rowsPerInsert rows per statement, the remainder one by one.
    let first = 0;
    for (; first + rowsPerInsert <= batch.count; first += rowsPerInsert) {
      fill(manyArguments, batch, order, first, rowsPerInsert);
      insertMany.run(...manyArguments);
    }
    for (; first < batch.count; first++) {
      fill(oneArguments, batch, order, first, 1);
      insertOne.run(...oneArguments);
    }
    // Each key's latest use in the batch (its text index stands for it: one string per key in a batch).
    const lastUse = new Map();
    for (let row = 0; row < batch.count; row++) {
      const key = batch.texts[row * textWidth + workerData.keyIdPlace];
      const at = batch.numbers[row * numberWidth + workerData.createdAtPlace];
      if (!(lastUse.get(key) >= at)) lastUse.set(key, at);
    }
    for (const [key, at] of lastUse) touch.run(at, batch.strings[key], at);
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
      writeAll(message.batch);
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
    // The page cache too: pages not in use are freed (read again from the file, or the OS's cache of it, when needed).
    try { database.pragma('shrink_memory'); } catch {}
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
  /** Inserts a batch of rows and moves its keys' last-used times, in one transaction. */
  write(batch: RowBatchMessage): Promise<void>;
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
      layout: requestLogLayout,
      numberWidth: requestLogNumberColumns.length,
      textWidth: requestLogTextColumns.length,
      keyIdPlace: requestLogTextColumns.indexOf('key_id'),
      accountIdPlace: requestLogTextColumns.indexOf('account_id'),
      createdAtPlace: requestLogNumberColumns.indexOf('created_at'),
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
    write(batch) {
      if (!alive) return Promise.reject(new Error('the SQLite worker thread has stopped'));
      const id = nextId++;
      return new Promise<void>((resolve, reject) => {
        pending.set(id, { resolve, reject });
        // While a write is pending the thread must keep the process alive, or its answer could be lost at exit.
        worker.ref();
        worker.postMessage({ type: 'write', id, batch });
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
