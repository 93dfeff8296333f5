import { Worker } from 'node:worker_threads';

/**
 * SQLite in WAL mode appends every commit to the -wal file; a checkpoint copies those pages back into the database
 * and fsyncs it. Left to SQLite, that happens inside whichever commit crosses the threshold: on the event loop, in
 * the middle of serving requests (measured: a quarter of the request log's write cost, and its worst stalls). So
 * the gateway turns automatic checkpoints off on its connection and a worker thread, on its own connection,
 * checkpoints every second instead.
 */

const workerSource = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const database = new Database(workerData.file);
database.pragma('busy_timeout = 1000');
let runs = 0;
const timer = setInterval(() => {
  try {
    // PASSIVE never waits for readers or writers; every minute a TRUNCATE also resets the -wal file's size.
    database.pragma(++runs % 60 === 0 ? 'wal_checkpoint(TRUNCATE)' : 'wal_checkpoint(PASSIVE)');
  } catch (error) {
    parentPort.postMessage({ error: String(error && error.message) });
  }
}, workerData.intervalMs);
parentPort.on('message', (message) => {
  if (message !== 'stop') return;
  clearInterval(timer);
  try { database.pragma('wal_checkpoint(TRUNCATE)'); } catch {}
  database.close();
  parentPort.postMessage({ stopped: true });
});
`;

export interface Checkpointer {
  close(): Promise<void>;
}

export function startCheckpointer(file: string, driverPath: string, onError: (message: string) => void): Checkpointer {
  const worker = new Worker(workerSource, { eval: true, workerData: { file, driver: driverPath, intervalMs: 1000 } });
  worker.unref();
  worker.on('message', (message: { error?: string }) => {
    if (message.error) onError(message.error);
  });
  worker.on('error', (error) => onError(String(error.message)));
  return {
    close: () =>
      new Promise((resolve) => {
        const done = () => resolve();
        worker.once('exit', done);
        worker.on('message', (message: { stopped?: boolean }) => {
          if (message.stopped) void worker.terminate();
        });
        worker.postMessage('stop');
        setTimeout(() => void worker.terminate(), 2000).unref();
      }),
  };
}
