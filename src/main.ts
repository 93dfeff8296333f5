import { buildModelCatalog } from './access/policy.js';
import type { DataPlane } from './api/v1/data-plane.js';
import type { Config } from './config/schema.js';
import type { DatabaseHandle } from './db/connect.js';
import type { Limiter } from './limits/limiter.js';
import { workerMetrics } from './observability/cluster-metrics.js';
import { createLogger, type Logger } from './observability/logger.js';
import { createMetrics, type Metrics, type MetricsSources } from './observability/metrics.js';
import { buildDataPlane } from './startup/build-data-plane.js';
import { buildStorage } from './startup/build-storage.js';
import { Lifetime } from './startup/lifetime.js';
import { listen } from './startup/listen.js';

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
  /** Graceful stop: refuse new connections, let in-flight requests finish (up to the deadline), flush the log. */
  close(): Promise<void>;
}

export interface StartOptions {
  logger?: Logger;
  /** Limits kept elsewhere (the primary process of `serve --workers`); used when Redis is not configured. */
  limiter?: Limiter;
  /** Whether this process runs request-log retention (one worker of a cluster does). Default: true. */
  runRetention?: boolean;
  /** A worker of `serve --workers`: /metrics answers with every worker's metrics, gathered by the primary. */
  clusterWorker?: boolean;
}

export async function startGateway(config: Config, options: StartOptions = {}): Promise<Gateway> {
  const logger = options.logger ?? createLogger(config.logging.level);
  const lifetime = new Lifetime(logger);
  // Filled in as the services they read are built; read only when /metrics is scraped.
  const metricsSources: MetricsSources = { queueDepth: () => 0, inFlight: () => 0 };
  const metrics = createMetrics(metricsSources);
  if (options.clusterWorker) metrics.render = workerMetrics(metrics.registry);
  lifetime.add('event-loop lag sampling', metrics.eventLoopLag, (lag) => lag.close());
  const catalog = buildModelCatalog(config.models);

  const storage = await buildStorage(config, logger, metrics, lifetime, {
    runRetention: options.runRetention !== false,
  });
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
  );
  const { url, port, metricsUrl } = await listen(config, catalog, storage, parts, logger, metrics, lifetime);
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
    close: () => {
      closing ??= close();
      return closing;
    },
  };
}
