import cluster, { type Worker } from 'node:cluster';
import type { Config } from '../config/schema.js';
import { type DatabaseHandle, openDatabase } from '../db/connect.js';
import { sumSpend } from '../db/repositories/usage.js';
import { serveLimiter } from '../limits/ipc-limiter.js';
import { MemoryLimiter } from '../limits/memory-limiter.js';
import type { Logger } from '../observability/logger.js';
import { HealthLedger } from '../routing/health-ledger.js';
import { serveHealthLedger } from '../routing/ipc-health-store.js';
import { testMigrationPause } from '../startup/test-migration-pause.js';
import { FlexibleInvitationLimit, invitationLimitPolicy } from '../users/invitation-limit.js';
import { serveInvitationLimit } from '../users/ipc-invitation-limit.js';
import { serveSignInThrottle } from '../users/ipc-sign-in-throttle.js';
import { MemorySignInThrottle, signInThrottlePolicy } from '../users/sign-in-throttle.js';

/**
 * `serve --workers N`: the primary process forks N workers that share the listening port (Node's cluster
 * module hands out connections). The primary migrates the database once, keeps the one set of limit counters
 * when Redis is not configured (workers ask it over IPC, so N workers admit what one process would), restarts a
 * worker that crashes, and on SIGTERM/SIGINT stops every worker gracefully before exiting.
 */

export const workerIndexVariable = 'SWITCHBOARD_WORKER_INDEX';

export interface WorkerListening {
  channel: 'switchboard-worker';
  kind: 'listening';
  url: string;
  port: number;
}

export function isWorkerListening(message: unknown): message is WorkerListening {
  const candidate = message as WorkerListening | null;
  return candidate?.channel === 'switchboard-worker' && candidate.kind === 'listening';
}

/** A worker that could not start (the port taken, the database unusable): the one line to show the operator. */
export interface WorkerStartFailed {
  channel: 'switchboard-worker';
  kind: 'start-failed';
  message: string;
}

export function isWorkerStartFailed(message: unknown): message is WorkerStartFailed {
  const candidate = message as WorkerStartFailed | null;
  return candidate?.channel === 'switchboard-worker' && candidate.kind === 'start-failed';
}

export interface PrimaryOptions {
  config: Config;
  workers: number;
  logger: Logger;
  /** Runs once, before the workers start (first-run bootstrap), with the migrated database. */
  beforeWorkers: (database: DatabaseHandle) => Promise<void>;
  /** Runs once, when every worker listens. */
  onListening: (url: string, port: number) => void;
}

const maxRestartsPerMinute = 5;

/**
 * SIGTERM/SIGINT before the workers are forked (the primary migrating the database or creating the first account):
 * without a handler the signal would kill the process outright. The step under way finishes (a migration is one
 * transaction, applied whole or not at all; the first account and its key are created, or neither), then the database
 * is closed and the primary exits 0 without starting any worker. A second signal exits at once (1); the database
 * then rolls back the transaction that was open.
 */
function stopWhilePreparing(logger: Logger) {
  let requested: NodeJS.Signals | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    if (requested) {
      logger.warn({ signal }, 'second signal while preparing the database: exiting without waiting');
      process.exit(1);
    }
    requested = signal;
    logger.info({ signal }, 'received signal while preparing the database; stopping once the step under way is done');
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  const done = () => {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  };
  return {
    requested: () => requested !== undefined,
    done,
    stop: async (database: DatabaseHandle): Promise<void> => {
      await database.close();
      logger.info({ signal: requested }, 'stopped before starting the workers');
      process.exit(0);
    },
  };
}

export async function runPrimary(options: PrimaryOptions): Promise<void> {
  const { config, workers, logger } = options;
  const preparing = stopWhilePreparing(logger);
  const database = await openDatabase(config, { afterEachMigration: testMigrationPause() });
  if (preparing.requested()) return preparing.stop(database);
  await options.beforeWorkers(database);
  // Loaded here, not at the top: every CLI command loads this module, and only `serve --workers` needs prom-client.
  const { collectMetricsForWorkers } = await import('./worker-metrics.js');
  if (preparing.requested()) return preparing.stop(database);
  // From here to the stop handlers below, nothing waits: no signal can fall between the two.
  preparing.done();
  const limiter = config.redis.url
    ? undefined
    : new MemoryLimiter((subject, _period, since) => {
        const [kind, id] = subject.id.split(':') as [string, string];
        return sumSpend(database.db, kind === 'account' ? { accountId: id } : { keyId: id }, since);
      });

  let shuttingDown = false;
  let announced = false;
  const listening = new Set<number>();
  const restarts: number[] = [];
  const releases = new Map<Worker, () => void>();
  const answerMetricsRequest = collectMetricsForWorkers();
  // Without Redis the workers' sign-in attempts and invitations are counted here, once for all of them, and their
  // deployment health is shared here.
  const signInThrottle = config.redis.url ? undefined : new MemorySignInThrottle(signInThrottlePolicy(config));
  const breaker = config.routing.circuitBreaker;
  const healthLedger = config.redis.url || !breaker.enabled ? undefined : new HealthLedger(breaker.windowMs);
  const invitationLimit = config.redis.url ? undefined : new FlexibleInvitationLimit(invitationLimitPolicy(config));

  const fork = (index: number): void => {
    const worker = cluster.fork({ [workerIndexVariable]: String(index) });
    if (limiter) {
      const served = serveLimiter(limiter, (message) => {
        if (worker.isConnected()) worker.send(message);
      });
      worker.on('message', served.onMessage);
      releases.set(worker, served.release);
    }
    worker.on('message', (message: unknown) => answerMetricsRequest(worker, message));
    if (signInThrottle) {
      worker.on(
        'message',
        serveSignInThrottle(signInThrottle, (message) => {
          if (worker.isConnected()) worker.send(message);
        }),
      );
    }
    if (healthLedger) {
      worker.on(
        'message',
        serveHealthLedger(healthLedger, (message) => {
          if (worker.isConnected()) worker.send(message);
        }),
      );
    }
    if (invitationLimit) {
      worker.on(
        'message',
        serveInvitationLimit(invitationLimit, (message) => {
          if (worker.isConnected()) worker.send(message);
        }),
      );
    }
    worker.on('message', (message: unknown) => {
      // Before every worker has listened once, a worker that cannot start means none will: restarting it would only
      // repeat the error five times, so the server stops with the worker's reason.
      if (isWorkerStartFailed(message) && !announced && !shuttingDown) {
        giveUp(message.message);
        return;
      }
      if (!isWorkerListening(message)) return;
      listening.add(index);
      if (!announced && listening.size === workers) {
        announced = true;
        logger.info({ url: message.url, workers }, 'switchboard is listening with several worker processes');
        options.onListening(message.url, message.port);
      }
    });
    worker.on('exit', (code, signal) => {
      releases.get(worker)?.();
      releases.delete(worker);
      if (shuttingDown) return;
      const now = Date.now();
      restarts.push(now);
      while (restarts.length > 0 && (restarts[0] as number) < now - 60_000) restarts.shift();
      if (restarts.length > maxRestartsPerMinute) {
        logger.fatal({ code, signal }, 'workers keep crashing; giving up');
        giveUp();
        return;
      }
      logger.error({ worker: index, code, signal }, 'a worker process exited; starting another');
      fork(index);
    });
  };
  /**
   * Stops every worker, then the primary with exit code 1. The workers are waited for: a primary that exited under a
   * worker still starting left it crashing with Node's EPIPE stack trace, and a worker behind on the port.
   */
  const giveUp = (reason?: string): void => {
    if (shuttingDown) return;
    shuttingDown = true;
    if (reason !== undefined) process.stderr.write(`switchboard: ${reason}\n`);
    const running = Object.values(cluster.workers ?? {}).filter((worker): worker is Worker => worker !== undefined);
    const exited = running.map(
      (worker) => new Promise((resolve) => (worker.isDead() ? resolve(null) : worker.once('exit', resolve))),
    );
    for (const worker of running) worker.process.kill('SIGKILL');
    Promise.all(exited)
      .then(async () => {
        await limiter?.close();
        await database.close();
      })
      .finally(() => process.exit(1));
  };
  for (let index = 0; index < workers; index++) fork(index);

  let signals = 0;
  const stop = (signal: NodeJS.Signals) => {
    if (++signals > 1) {
      logger.warn({ signal }, 'second signal: stopping the workers without waiting');
      for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGKILL');
      process.exit(1);
    }
    shuttingDown = true;
    logger.info({ signal }, 'stopping the workers');
    const running = Object.values(cluster.workers ?? {}).filter((worker): worker is Worker => worker !== undefined);
    const exited = running.map((worker) => new Promise((resolve) => worker.once('exit', resolve)));
    for (const worker of running) worker.process.kill('SIGTERM');
    const deadline = setTimeout(() => {
      logger.error('workers did not stop in time; killing them');
      for (const worker of running) worker.process.kill('SIGKILL');
    }, config.server.shutdownTimeoutMs + 15_000);
    Promise.all(exited)
      .then(async () => {
        clearTimeout(deadline);
        await limiter?.close();
        await database.close();
        process.exit(0);
      })
      .catch(() => process.exit(1));
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}
