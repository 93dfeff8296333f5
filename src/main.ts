import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { AccessChangeFeed, publishAccessChange } from './access/change-feed.js';
import { buildModelCatalog } from './access/policy.js';
import type { ManagementServices } from './api/manage/services.js';
import { createDataPlane, type DataPlane } from './api/v1/data-plane.js';
import type { Config } from './config/schema.js';
import { type DatabaseHandle, openDatabase } from './db/connect.js';
import { sumSpend } from './db/repositories/request-log.js';
import { Authenticator } from './keys/authenticate.js';
import { loadKeySecret } from './keys/secret.js';
import type { Limiter } from './limits/limiter.js';
import { MemoryLimiter, type SpendLoader } from './limits/memory-limiter.js';
import { RedisLimiter } from './limits/redis-limiter.js';
import { createLogger, type Logger } from './observability/logger.js';
import { createMetrics, type Metrics } from './observability/metrics.js';
import { packageVersion } from './package-files.js';
import { ProviderRegistry } from './providers/registry.js';
import { connectRedis, waitUntilReady } from './redis/connect.js';
import { ensurePartitions, RetentionJob } from './request-log/retention.js';
import { type SqliteWorker, startSqliteWorker } from './request-log/sqlite-worker.js';
import { RequestLogWriter } from './request-log/writer.js';
import { DeploymentHealth } from './routing/deployment-health.js';
import { Dispatcher } from './routing/dispatch.js';
import { Router } from './routing/router.js';
import { buildApp } from './server/build-app.js';
import { loadConsoleAssets } from './server/console-assets.js';
import { ApiError } from './server/errors.js';
import { reclaimMemoryWhenIdle } from './server/reclaim-memory-when-idle.js';
import { UpstreamClient } from './upstream/client.js';
import { hashPassword } from './users/password.js';
import { startSessionSweeper } from './users/sessions.js';
import { SignInLimiter } from './users/sign-in-limiter.js';

/**
 * Start-up and shutdown. Every service with a lifetime is built here, passed down, and closed in reverse order:
 * no module holds mutable state of its own.
 */

export interface Gateway {
  /** http://host:port of the running server. */
  url: string;
  port: number;
  config: Config;
  database: DatabaseHandle;
  logger: Logger;
  metrics: Metrics;
  dataPlane: DataPlane;
  /** Graceful stop: refuse new connections, let in-flight requests finish (up to the deadline), flush the log. */
  close(): Promise<void>;
}

export interface StartOptions {
  logger?: Logger;
  /** Limits kept elsewhere (the primary process of `serve --workers`); used when Redis is not configured. */
  limiter?: Limiter;
  /** Whether this process runs request-log retention (one worker of a cluster does). Default: true. */
  runRetention?: boolean;
}

/** The console's services with a lifetime: the sign-in limiter and the sweeper of ended sessions. */
function startConsoleServices(config: Config, database: DatabaseHandle, logger: Logger) {
  const signInLimiter = new SignInLimiter({
    maxFailures: config.console.signInMaxFailures,
    windowMs: config.console.signInWindowMs,
  });
  const sweeper = startSessionSweeper(database.db, 3_600_000, (error) =>
    logger.warn({ err: error }, 'could not delete ended console sessions'),
  );
  // Hashed once per process, off the request path; verified against when a sign-in names an unknown address.
  const decoyPasswordHash = hashPassword('decoy password that nobody has');
  return {
    signInLimiter,
    decoyPasswordHash,
    close: () => {
      signInLimiter.close();
      sweeper.close();
    },
  };
}

export async function startGateway(config: Config, options: StartOptions = {}): Promise<Gateway> {
  const logger = options.logger ?? createLogger(config.logging.level);
  const secret = loadKeySecret(config.server.dataDir, config.keys.secret);
  const database = await openDatabase(config);
  // Request-log inserts and checkpoints run on a worker thread, off the event loop (see request-log/sqlite-worker.ts).
  let sqliteWorker: SqliteWorker | undefined;
  if (database.sqlite) {
    database.sqlite.pragma('wal_autocheckpoint = 0');
    sqliteWorker = startSqliteWorker({
      file: database.location,
      onError: (message) => logger.warn({ error: message }, 'SQLite worker: retried, or written on the main thread'),
    });
  }
  const catalog = buildModelCatalog(config.models);
  const upstream = new UpstreamClient();
  const registry = new ProviderRegistry(config, { upstream, logger });
  const router = new Router(catalog, registry, config.providers);
  const health = new DeploymentHealth(config.routing.circuitBreaker);

  let dataPlane: DataPlane | undefined;
  let logWriter: RequestLogWriter | undefined;
  const metrics = createMetrics({
    queueDepth: () => logWriter?.depth ?? 0,
    inFlight: () => dataPlane?.inFlight ?? 0,
    deploymentStates: () =>
      health.entries().map((entry) => ({ deployment: entry.deployment, unavailable: entry.availableInMs > 0 })),
    providerLoad: () => registry.load(),
  });
  const dispatcher = new Dispatcher({ router, health, metrics });
  logWriter = new RequestLogWriter({
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
  const retention = new RetentionJob({
    database,
    logger,
    retentionMs: config.requestLog.retentionMs,
    intervalMs: config.requestLog.retentionIntervalMs,
    batchSize: config.requestLog.retentionBatchSize,
  });
  if (options.runRetention !== false) retention.start();

  const authenticator = new Authenticator({
    db: database.db,
    secret,
    catalog,
    logger,
    cacheTtlMs: config.keys.cacheTtlMs,
    limitDefaults: { account: config.limits.accountDefaults, key: config.limits.keyDefaults },
  });

  const redisUrl = config.redis.url;
  const redisOptions = redisUrl
    ? {
        url: redisUrl,
        commandTimeoutMs: config.redis.commandTimeoutMs,
        logger,
        onStatus: (up: boolean) => metrics.redisUp.set(up ? 1 : 0),
      }
    : undefined;
  const redis = redisOptions ? await connectRedis(redisOptions) : undefined;
  const subscriber = redisOptions ? await connectRedis(redisOptions, 'subscriber') : undefined;
  if (redis && !(await waitUntilReady(redis, 3000))) {
    logger.warn('Redis is not reachable at start-up; limits use the configured fallback until it is');
  }

  const changeFeed = new AccessChangeFeed({
    db: database.db,
    logger,
    pollIntervalMs: config.keys.changePollIntervalMs,
    subscriber,
    keyPrefix: config.redis.keyPrefix,
    onChange: () => authenticator.invalidateAll(),
  });
  await changeFeed.start();

  const loadSpend: SpendLoader = (subject, _period, since) => {
    const [kind, id] = subject.id.split(':') as [string, string];
    return sumSpend(database.db, kind === 'account' ? { accountId: id } : { keyId: id }, since);
  };
  const localLimiter = new MemoryLimiter(loadSpend);
  const limiter: Limiter = redis
    ? new RedisLimiter({
        redis,
        keyPrefix: config.redis.keyPrefix,
        loadSpend,
        local: localLimiter,
        onUnavailable: config.redis.onUnavailable,
        logger,
        onFallback: (kind, policy) => metrics.limiterFallbacks.inc({ kind, policy }),
      })
    : (options.limiter ?? localLimiter);

  // Local models load before the server listens, so the first request does not wait for them.
  await registry.warmUp();
  dataPlane = createDataPlane({
    config,
    catalog,
    authenticator,
    router,
    dispatcher,
    logWriter,
    metrics,
    logger,
    limiter,
  });
  const consoleServices = config.console.enabled ? startConsoleServices(config, database, logger) : undefined;
  const management = consoleServices && {
    services: {
      config,
      database,
      catalog,
      secret,
      logger,
      signInLimiter: consoleServices.signInLimiter,
      decoyPasswordHash: consoleServices.decoyPasswordHash,
      // This node forgets its cached keys at once; the others hear it through Redis (or their database poll).
      onAccessChanged: () => {
        authenticator.invalidateAll();
        if (redis) {
          publishAccessChange(redis, config.redis.keyPrefix).catch((error: unknown) =>
            logger.warn({ err: error }, 'could not announce an access change through Redis; other nodes poll for it'),
          );
        }
      },
    } satisfies ManagementServices,
    consoleAssets: loadConsoleAssets(),
    version: packageVersion(),
  };
  const app = buildApp({ dataPlane, database, metrics, logger, redis, management });
  await app.listen({ host: config.server.host, port: config.server.port });
  const address = app.server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;
  logger.info(
    { url, database: database.location, models: catalog.names.length, providers: config.providers.length },
    'switchboard is listening',
  );

  let closing: Promise<void> | undefined;
  const plane = dataPlane;
  const stopReclaiming = reclaimMemoryWhenIdle({
    started: () => plane.started,
    inFlight: () => plane.inFlight,
    logger,
    alsoCollect: () => sqliteWorker?.collectGarbage(),
  });
  const writer = logWriter;
  async function close(): Promise<void> {
    const deadline = Date.now() + config.server.shutdownTimeoutMs;
    logger.info({ inFlight: plane.inFlight }, 'shutting down: finishing in-flight requests');
    stopReclaiming();
    app.server.close();
    app.server.closeIdleConnections();
    let timer: NodeJS.Timeout | undefined;
    const deadlinePassed = new Promise<'deadline'>((resolve) => {
      timer = setTimeout(() => resolve('deadline'), Math.max(0, deadline - Date.now()));
    });
    const outcome = await Promise.race([plane.idle().then(() => 'idle' as const), deadlinePassed]);
    clearTimeout(timer);
    if (outcome === 'deadline') {
      logger.warn({ inFlight: plane.inFlight }, 'shutdown deadline passed: interrupting the remaining requests');
      plane.abortAll(
        new ApiError({
          status: 503,
          type: 'server_error',
          code: 'server_shutting_down',
          message: 'The server is shutting down; retry the request.',
          headers: { 'retry-after': '1', 'retry-after-ms': '1000' },
        }),
      );
      await Promise.race([plane.idle(), new Promise((resolve) => setTimeout(resolve, 2000))]);
    }
    app.server.closeAllConnections();
    await app.close();
    changeFeed.close();
    await retention.close();
    await limiter.close();
    redis?.disconnect();
    subscriber?.disconnect();
    consoleServices?.close();
    // The log gets its own few seconds after the requests, so rows of requests finished at the deadline are kept.
    await writer.close(Math.max(deadline, Date.now()) + 5000);
    await registry.close();
    await upstream.close();
    await sqliteWorker?.close();
    await database.close();
    logger.info('shutdown complete');
  }

  return {
    url,
    port: address.port,
    config,
    database,
    logger,
    metrics,
    dataPlane,
    close: () => {
      closing ??= close();
      return closing;
    },
  };
}
