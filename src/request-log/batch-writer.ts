import type { DatabaseHandle } from '../db/connect.js';
import { writeRowBatchPostgres } from './postgres-batch-writer.js';
import type { RowBatch } from './row-batch.js';
import { createSqliteBatchWriter } from './sqlite-batch-writer.js';
import type { SqliteWorker } from './sqlite-worker.js';

/** Writes a batch of rows and moves each key's last-used time forward, in one transaction. */
export type RequestLogBatchWriter = (batch: RowBatch) => Promise<void>;

/**
 * Where a batch is written. SQLite: on the worker thread when there is one (the insert then never stalls the event
 * loop), on the server's connection otherwise (no thread, or it has died: rare), the same statements either way
 * (sqlite-batch-writer.ts). PostgreSQL: one INSERT from column arrays (postgres-batch-writer.ts).
 */
export function createRequestLogBatchWriter(handle: DatabaseHandle, worker?: SqliteWorker): RequestLogBatchWriter {
  const sqlite = handle.sqlite;
  if (sqlite) {
    const writeHere = createSqliteBatchWriter(sqlite);
    return async (batch) => {
      if (worker?.alive) await worker.write(batch.message());
      else writeHere(batch.message());
    };
  }
  return (batch) => writeRowBatchPostgres(handle.db, batch.message());
}
