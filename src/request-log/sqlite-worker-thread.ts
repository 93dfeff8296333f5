import { parentPort, workerData } from 'node:worker_threads';
import SqliteDatabase from 'better-sqlite3';
import type { ResponseRecord } from '../db/repositories/responses.js';
import { createSqliteResponseWriter, type SqliteResponseWriter } from '../db/repositories/responses-sqlite-writer.js';
import { fullCollection } from '../server/reclaim-memory-when-idle.js';
import type { RowBatchMessage } from './row-batch.js';
import { createSqliteBatchWriter, type SqliteBatchWriter } from './sqlite-batch-writer.js';

/**
 * The code of the SQLite worker thread (started by sqlite-worker.ts; bundled as an entry of its own). It has its own
 * connection to the database file and does the writes that would otherwise stall the event loop: request-log
 * batches (sqlite-batch-writer.ts), stored `/v1/responses` (responses-sqlite-writer.ts) and WAL checkpoints: a PASSIVE one each second something was written,
 * a TRUNCATE one every 60th and once the writes stop (automatic checkpoints are off on both connections, so no commit
 * pays for one).
 */

/** What the thread is started with. */
export interface SqliteThreadData {
  file: string;
  checkpointIntervalMs: number;
  /** Post a `checkpoint-tick` after each tick of the timer (only a test asks: startup/test-hooks.ts). */
  reportCheckpointTicks: boolean;
}

/** What the main thread posts. */
export type SqliteThreadRequest =
  | { type: 'write'; id: number; batch: RowBatchMessage }
  | { type: 'write-responses'; id: number; records: readonly ResponseRecord[] }
  | { type: 'collect' }
  | { type: 'stop' };

/** What the thread posts back: a write's result, a failed checkpoint, a tick of the checkpoint timer, or that it has stopped. */
export type SqliteThreadReply =
  | { type: 'written'; id: number }
  | { type: 'failed'; id: number; error: string; code: string | undefined }
  | { type: 'checkpoint-failed'; error: string }
  | { type: 'checkpoint-tick' }
  | { type: 'stopped' };

const checkpointsPerTruncate = 60;

function runThread(port: NonNullable<typeof parentPort>, data: SqliteThreadData): void {
  const database = new SqliteDatabase(data.file);
  database.pragma('busy_timeout = 5000');
  database.pragma('synchronous = NORMAL');
  database.pragma('foreign_keys = ON');
  database.pragma('wal_autocheckpoint = 0');
  // SQLite's default page cache (2 MB), not better-sqlite3's 16 MB: appends touch only the right edge of each index,
  // and a larger cache stayed resident after a load (inserts are grouped by account instead).
  database.pragma('cache_size = -2000');
  // A 50-row INSERT's statement journal stays in memory instead of spilling to a temporary file.
  database.pragma('temp_store = MEMORY');

  let write: SqliteBatchWriter | undefined;
  let writeResponses: SqliteResponseWriter | undefined;
  let collectGarbage: (() => void) | undefined;
  let checkpoints = 0;
  const post = (reply: SqliteThreadReply) => port.postMessage(reply);

  // Checkpoints only after something was written (by this thread, or by another connection: data_version), and one
  // TRUNCATE when the writes stop, which gives the -wal's space back: from then on an idle server touches no file (a
  // checkpoint with nothing to copy still takes locks, and a TRUNCATE sets the -wal's time and invalidates every
  // other connection's page cache).
  const dataVersion = database.prepare('pragma data_version').pluck();
  let lastDataVersion = dataVersion.get();
  let wroteSinceCheckpoint = false;
  let walToTruncate = false;
  const checkpoint = (mode: 'PASSIVE' | 'TRUNCATE') => {
    const [result] = database.pragma(`wal_checkpoint(${mode})`) as Array<{
      busy: number;
      log: number;
      checkpointed: number;
    }>;
    if (!result) return;
    // Frames a reader still needed are copied at the next tick; a -wal with frames is truncated once writes stop (a
    // TRUNCATE that could not restart the log leaves them: tried again). Busy alone is no reason: with the -wal
    // empty there is nothing left to do, and repeating it would touch the file while idle.
    if (result.checkpointed < result.log) wroteSinceCheckpoint = true;
    walToTruncate = result.log > 0;
  };
  const tick = () => {
    try {
      const version = dataVersion.get();
      if (!wroteSinceCheckpoint && version === lastDataVersion) {
        if (walToTruncate) checkpoint('TRUNCATE');
        return;
      }
      wroteSinceCheckpoint = false;
      lastDataVersion = version;
      // PASSIVE never waits for readers or writers; a TRUNCATE now and then also resets the -wal under steady writes.
      checkpoints++;
      checkpoint(checkpoints % checkpointsPerTruncate === 0 ? 'TRUNCATE' : 'PASSIVE');
    } catch (error) {
      post({ type: 'checkpoint-failed', error: messageOf(error) });
    }
  };
  const timer = setInterval(() => {
    tick();
    if (data.reportCheckpointTicks) post({ type: 'checkpoint-tick' });
  }, data.checkpointIntervalMs);

  port.on('message', (request: SqliteThreadRequest) => {
    switch (request.type) {
      case 'write':
        try {
          write ??= createSqliteBatchWriter(database);
          write(request.batch);
          wroteSinceCheckpoint = true;
          post({ type: 'written', id: request.id });
        } catch (error) {
          post({ type: 'failed', id: request.id, error: messageOf(error), code: codeOf(error) });
        }
        return;
      case 'write-responses':
        try {
          writeResponses ??= createSqliteResponseWriter(database);
          writeResponses(request.records);
          wroteSinceCheckpoint = true;
          post({ type: 'written', id: request.id });
        } catch (error) {
          post({ type: 'failed', id: request.id, error: messageOf(error), code: codeOf(error) });
        }
        return;
      case 'collect':
        // Asked when the server has gone quiet: this thread's heap grew with the batches it received, and is only
        // collected when JavaScript allocates here again. Then SQLite frees the cache pages not in use.
        collectGarbage ??= fullCollection();
        collectGarbage?.();
        collectGarbage?.();
        try {
          database.pragma('shrink_memory');
        } catch {
          // Only memory is at stake; the next collect tries again.
        }
        return;
      case 'stop':
        clearInterval(timer);
        try {
          database.pragma('wal_checkpoint(TRUNCATE)');
        } catch {
          // The next start checkpoints what is left.
        }
        database.close();
        post({ type: 'stopped' });
        return;
    }
  });
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

if (!parentPort) throw new Error('sqlite-worker-thread runs as a worker thread (see sqlite-worker.ts)');
runThread(parentPort, workerData as SqliteThreadData);
