import { buildModelCatalog } from './access/policy.js';
import type { DataPlane } from './api/v1/data-plane.js';
import { metricsOfAllWorkers } from './cluster/worker-metrics.js';
import type { Config } from './config/schema.js';
import type { DatabaseHandle } from './db/connect.js';
import type { Limiter } from './limits/limiter.js';
import { createLogger, type Logger } from './observability/logger.js';
import { createMetrics, type Metrics, type MetricsSources } from './observability/metrics.js';
import type { SharedHealthStore } from './routing/shared-health-store.js';
import { buildDataPlane, type DataPlaneParts } from './startup/build-data-plane.js';
import { buildStorage, type Storage } from './startup/build-storage.js';
import { Lifetime } from './startup/lifetime.js';
import { listen } from './startup/listen.js';
import { StoppedWhileStarting } from './startup/stopped-while-starting.js';
import type { TestHooks } from './startup/test-hooks.js';
import { warnOfLookAlikeEmails } from './startup/warn-look-alike-emails.js';
import { warnOfUnfoldedEmails } from './startup/warn-unfolded-emails.js';
import { warnOfUnpricedModels } from './startup/warn-unpriced-models.js';

/**
 * Start-up and shutdown, as a list: storage, then the data plane, then the server listening. Every service with a
 * lifetime is registered as it is built and closed in reverse (startup/lifetime.ts); no module holds mutable state.
 */

export interface Gateway {
  /** http://host:port of the running server. */
  url: string;
  port: number;
  config: Config;
  database: DatabaseHandle;
  logger: Logger;
  metrics: Metrics;
  /** http://host:port of the metrics listener, when metrics.port gives /metrics a port of its own. */
  metricsUrl: string | undefined;
  dataPlane: DataPlane;
  /** Deployment health shared through Redis (or the primary of `serve --workers`); its exchange() runs one now. */
  healthStore: SharedHealthStore | undefined;
  /** Graceful stop: refuse new connections, let in-flight requests finish (up to the deadline), flush the log. */
  close(): Promise<void>;
}

export interface StartOptions {
  logger?: Logger;
  /** Limits kept elsewhere (the primary process of `serve --workers`); used when Redis is not configured. */
  limiter?: Limiter;
  /** Whether this process runs request-log retention (one worker of a cluster does). Default: true. */
  runRetention?: boolean;
  /**
   * A worker of `serve --workers`: /metrics answers for every worker, and without Redis the sign-in throttle's
   * counts are the primary's, through it.
   */
  clusterWorker?: boolean;
  /**
   * Whether this process logs the start-up warnings about the configuration (models without prices). Default: true;
   * the workers of `serve --workers` leave them to the primary, so they are logged once, not once per worker.
   */
  warnAboutConfig?: boolean;
  /**
   * The signal that stopped the process while it starts (`serve`'s SIGTERM during migrations): checked between the
   * steps, so a stopped start closes what it opened and never listens (StoppedWhileStarting).
   */
  stopRequested?: () => string | undefined;
  /** Test-only hooks: a health clock and signals to wait on (startup/test-hooks.ts); production passes none. */
  testHooks?: TestHooks;
}

export async function startGateway(config: Config, options: StartOptions = {}): Promise<Gateway> {
  const logger = options.logger ?? createLogger(config.logging.level);
  const lifetime = new Lifetime(logger);
  // Filled in as the services they read are built; read only when /metrics is scraped.
  const metricsSources: MetricsSources = { queueDepth: () => 0, inFlight: () => 0 };
  const metrics = createMetrics(metricsSources);
  if (options.clusterWorker) metrics.exposition = metricsOfAllWorkers(metrics.registry);
  lifetime.add('event-loop lag sampling', metrics.eventLoopLag, (lag) => lag.close());
  const catalog = buildModelCatalog(config.models);

  let started: { storage: Storage; parts: DataPlaneParts; url: string; port: number; metricsUrl: string | undefined };
  const stopIfRequested = () => {
    const signal = options.stopRequested?.();
    if (signal !== undefined) throw new StoppedWhileStarting(signal);
  };
  try {
    const storage = await buildStorage(config, logger, metrics, lifetime, {
      runRetention: options.runRetention !== false,
      testHooks: options.testHooks,
    });
    stopIfRequested();
    metricsSources.queueDepth = () => storage.logWriter.depth;
    const parts = await buildDataPlane(
      config,
      catalog,
      storage,
      logger,
      metrics,
      metricsSources,
      lifetime,
      options.limiter,
      options.clusterWorker === true,
      options.testHooks,
    );
    if (options.warnAboutConfig !== false) {
      await warnOfUnpricedModels(config, storage.database.db, logger);
      await warnOfUnfoldedEmails(storage.database.db, logger);
      await warnOfLookAlikeEmails(storage.database.db, logger);
    }
    stopIfRequested();
    started = {
      storage,
      parts,
      ...(await listen(config, catalog, storage, parts, logger, metrics, lifetime, {
        clusterWorker: options.clusterWorker === true,
      })),
    };
  } catch (error) {
    // A start that fails half-way (the port taken, Redis refusing) closes what it had opened (database, worker
    // thread, local models, timers), so the process can exit and the next start finds nothing held.
    await lifetime.close(Date.now());
    if (error instanceof StoppedWhileStarting) logger.info({ signal: error.signal }, 'stopped before listening');
    throw error;
  }
  const { storage, parts, url, port, metricsUrl } = started;
  logger.info(
    {
      url,
      metrics: metricsUrl,
      database: storage.database.location,
      models: catalog.names.length,
      providers: config.providers.length,
    },
    'switchboard is listening',
  );

  let closing: Promise<void> | undefined;
  const close = async () => {
    await lifetime.close(Date.now() + config.server.shutdownTimeoutMs);
    logger.info('shutdown complete');
  };
  return {
    url,
    port,
    config,
    database: storage.database,
    logger,
    metrics,
    metricsUrl,
    dataPlane: parts.dataPlane,
    healthStore: parts.healthStore,
    close: () => {
      closing ??= close();
      return closing;
    },
  };
}
