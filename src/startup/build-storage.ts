import path from 'node:path';
import type { Config } from '../config/schema.js';
import { type DatabaseHandle, openDatabase } from '../db/connect.js';
import { loadKeySecret } from '../keys/secret.js';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import { ensurePartitions, RetentionJob } from '../request-log/retention.js';
import { type SqliteWorker, startSqliteWorker } from '../request-log/sqlite-worker.js';
import { RequestLogWriter } from '../request-log/writer.js';
import type { Lifetime } from './lifetime.js';
import type { TestHooks } from './test-hooks.js';
import { testMigrationPause } from './test-migration-pause.js';

/** The gateway's storage: the key secret, the database, and the request log's writer and retention. */
export interface Storage {
  secret: Buffer;
  database: DatabaseHandle;
  /** Where SQLite's request-log inserts and checkpoints run, off the event loop; absent on PostgreSQL. */
  sqliteWorker: SqliteWorker | undefined;
  logWriter: RequestLogWriter;
}

export async function buildStorage(
  config: Config,
  logger: Logger,
  metrics: Metrics,
  lifetime: Lifetime,
  options: { runRetention: boolean; testHooks?: TestHooks | undefined },
): Promise<Storage> {
  const secret = loadKeySecret(config.server.dataDir, config.keys.secret);
  const database = lifetime.add(
    'database',
    await openDatabase(config, { afterEachMigration: testMigrationPause() }),
    (handle) => handle.close(),
  );
  let sqliteWorker: SqliteWorker | undefined;
  if (database.sqlite) {
    // The worker thread checkpoints on its own schedule; automatic checkpoints would stall whichever commit hit them.
    database.sqlite.pragma('wal_autocheckpoint = 0');
    const worker = startSqliteWorker({
      file: database.location,
      afterCheckpointTick: options.testHooks?.afterCheckpointTick,
      onError: (message) => logger.warn({ error: message }, 'SQLite worker: retried, or written on the main thread'),
    });
    sqliteWorker = lifetime.add('sqlite worker', worker, (thread) => thread.close());
  }
  const logWriter = new RequestLogWriter({
    database,
    logger,
    batchSize: config.requestLog.batchSize,
    flushIntervalMs: config.requestLog.flushIntervalMs,
    maxQueue: config.requestLog.maxQueue,
    spillDir: path.join(config.server.dataDir, 'request-log-spill'),
    sqliteWorker,
    onWritten: (rows) => metrics.logRowsWritten.inc(rows),
    onFlushFailure: () => metrics.logFlushFailures.inc(),
  });
  // New rows must find their day's partition (PostgreSQL) before the first one is written.
  if (database.dialect === 'postgres') await ensurePartitions(database.db, Date.now(), logger);
  await logWriter.recoverSpills();
  logWriter.start();
  // The log gets a few seconds of its own after the requests, so rows of requests finished at the deadline are kept.
  lifetime.add('request-log writer', logWriter, (writer, deadline) =>
    writer.close(Math.max(deadline, Date.now()) + 5000),
  );
  const retention = new RetentionJob({
    database,
    logger,
    retentionMs: config.requestLog.retentionMs,
    rollupRetentionMs: config.requestLog.rollupRetentionMs,
    intervalMs: config.requestLog.retentionIntervalMs,
    batchSize: config.requestLog.retentionBatchSize,
    responsesBatchSize: config.responses.retentionBatchSize,
    betweenDeleteBatches: options.testHooks?.betweenDeleteBatches,
  });
  if (options.runRetention) retention.start();
  lifetime.add('retention', retention, (job) => job.close());
  return { secret, database, sqliteWorker, logWriter };
}
