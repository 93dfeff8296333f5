import { AccessChangeFeed, sqliteLatestChangeId } from '../access/change-feed.js';
import type { ModelCatalog } from '../access/policy.js';
import { createDataPlane, type DataPlane } from '../api/v1/data-plane.js';
import { ResponseStore } from '../api/v1/responses/response-store.js';
import { streamLeaseMs } from '../api/v1/responses/stream-leases.js';
import type { Config } from '../config/schema.js';
import { sumSpend } from '../db/repositories/usage.js';
import { Authenticator } from '../keys/authenticate.js';
import { type Limiter, limitsUnavailableError } from '../limits/limiter.js';
import { MemoryLimiter, type SpendLoader } from '../limits/memory-limiter.js';
import { RedisLimiter } from '../limits/redis-limiter.js';
import type { Logger } from '../observability/logger.js';
import type { Metrics, MetricsSources } from '../observability/metrics.js';
import { ProviderRegistry } from '../providers/registry.js';
import { connectRedis, waitUntilReady } from '../redis/connect.js';
import { DeploymentHealth } from '../routing/deployment-health.js';
import { Dispatcher } from '../routing/dispatch.js';
import { ipcHealthStore } from '../routing/ipc-health-store.js';
import { redisHealthStore } from '../routing/redis-health-store.js';
import { Router } from '../routing/router.js';
import type { SharedHealthStore } from '../routing/shared-health-store.js';
import { UpstreamClient } from '../upstream/client.js';
import type { Storage } from './build-storage.js';
import type { Lifetime } from './lifetime.js';
import type { TestHooks } from './test-hooks.js';

/**
 * Stored responses are written a few dozen at a time: a record held until a batch of the log's size (500) outlived
 * young-generation collections and was promoted, which cost more than the extra commits (docs/performance.md).
 */
const responsesBatchSize = 32;

/** Redis connections, when configured: one for commands, one subscribed to access changes. */
export interface RedisConnections {
  client: Awaited<ReturnType<typeof connectRedis>>;
  subscriber: Awaited<ReturnType<typeof connectRedis>>;
}

export interface DataPlaneParts {
  dataPlane: DataPlane;
  authenticator: Authenticator;
  redis: RedisConnections | undefined;
  /** Shares deployment health with the other processes, when there are any to share it with. */
  healthStore: SharedHealthStore | undefined;
}

async function connectRedisIfConfigured(
  config: Config,
  logger: Logger,
  metrics: Metrics,
  lifetime: Lifetime,
): Promise<RedisConnections | undefined> {
  const url = config.redis.url;
  if (!url) return undefined;
  const options = {
    url,
    commandTimeoutMs: config.redis.commandTimeoutMs,
    logger,
    onStatus: (up: boolean) => metrics.redisUp.set(up ? 1 : 0),
  };
  const client = lifetime.add('redis', await connectRedis(options), (connection) => connection.disconnect());
  const subscriber = lifetime.add('redis subscriber', await connectRedis(options, 'subscriber'), (connection) =>
    connection.disconnect(),
  );
  if (!(await waitUntilReady(client, 3000))) {
    logger.warn('Redis is not reachable at start-up; limits use the configured fallback until it is');
  }
  return { client, subscriber };
}

function buildLimiter(
  config: Config,
  storage: Storage,
  logger: Logger,
  metrics: Metrics,
  redis: RedisConnections | undefined,
  limiterOfPrimary: Limiter | undefined,
): Limiter {
  // Budgets start from what the request log says was spent. With the database unreachable spending cannot be
  // checked: the request is refused with a 503 that says so (never a 500), as when Redis holds the budgets and is down.
  const loadSpend: SpendLoader = async (subject, _period, since) => {
    const [kind, id] = subject.id.split(':') as [string, string];
    try {
      return await sumSpend(storage.database.db, kind === 'account' ? { accountId: id } : { keyId: id }, since);
    } catch (error) {
      logger.warn({ err: error }, 'could not read spending from the request log; refusing requests with budgets');
      throw limitsUnavailableError();
    }
  };
  const local = new MemoryLimiter(loadSpend);
  if (!redis) return limiterOfPrimary ?? local;
  return new RedisLimiter({
    redis: redis.client,
    keyPrefix: config.redis.keyPrefix,
    loadSpend,
    local,
    onUnavailable: config.redis.onUnavailable,
    leaseTtlMs: config.redis.concurrencyLeaseTtlMs,
    logger,
    onFallback: (kind, policy) => metrics.limiterFallbacks.inc({ kind, policy }),
  });
}

/**
 * Everything a /v1 request goes through: providers and their upstream client, routing and health, key checks with
 * their change feed, limits, and the data plane itself. Local models are loaded before the server listens, so the
 * first request does not wait for them.
 */
export async function buildDataPlane(
  config: Config,
  catalog: ModelCatalog,
  storage: Storage,
  logger: Logger,
  metrics: Metrics,
  metricsSources: MetricsSources,
  lifetime: Lifetime,
  limiterOfPrimary: Limiter | undefined,
  /** A worker of `serve --workers`: without Redis, deployment health is shared through the primary. */
  clusterWorker = false,
  testHooks: TestHooks = {},
): Promise<DataPlaneParts> {
  const upstream = lifetime.add(
    'upstream client',
    new UpstreamClient({ extraHeaders: testHooks.upstreamHeaders }),
    (client) => client.close(),
  );
  const registry = lifetime.add('providers', new ProviderRegistry(config, { upstream, logger }), (providers) =>
    providers.close(),
  );
  const router = new Router(catalog, registry, config.providers);
  const healthClock = testHooks.healthClock ?? Date.now;
  const health = new DeploymentHealth(config.routing.circuitBreaker, healthClock);
  metricsSources.deploymentStates = () =>
    health.entries().map((entry) => ({
      deployment: entry.deployment,
      unavailable: entry.state !== 'closed' || entry.availableInMs > 0,
    }));
  metricsSources.providerLoad = () => registry.load();
  metricsSources.upstreamConnections = () => upstream.connectionLoad();
  const dispatcher = new Dispatcher({ router, health, metrics, logger });

  const authenticator = new Authenticator({
    db: storage.database.db,
    secret: storage.secret,
    catalog,
    logger,
    cacheTtlMs: config.keys.cacheTtlMs,
    limitDefaults: { account: config.limits.accountDefaults, key: config.limits.keyDefaults },
  });
  const redis = await connectRedisIfConfigured(config, logger, metrics, lifetime);
  // Deployment health is shared in the background, through Redis or else the primary of `serve --workers`; requests
  // read this process's copy.
  const breaker = config.routing.circuitBreaker;
  const healthStore = !breaker.enabled
    ? undefined
    : redis
      ? redisHealthStore({
          redis: redis.client,
          keyPrefix: config.redis.keyPrefix,
          health,
          deployments: router.deploymentIds(),
          windowMs: breaker.windowMs,
          intervalMs: breaker.syncIntervalMs,
          logger,
          now: healthClock,
        })
      : clusterWorker
        ? ipcHealthStore({
            health,
            deployments: router.deploymentIds(),
            intervalMs: breaker.syncIntervalMs,
            logger,
            now: healthClock,
          })
        : undefined;
  if (healthStore) {
    healthStore.start();
    lifetime.add('shared deployment health', healthStore, (store) => store.close());
  }
  const changeFeed = new AccessChangeFeed({
    db: storage.database.db,
    logger,
    pollIntervalMs: config.keys.changePollIntervalMs,
    subscriber: redis?.subscriber,
    keyPrefix: config.redis.keyPrefix,
    latestChangeId: storage.database.sqlite ? sqliteLatestChangeId(storage.database.sqlite) : undefined,
    onChange: () => authenticator.invalidateAll(),
    afterPoll: testHooks.afterAccessChangePoll,
  });
  await changeFeed.start();
  lifetime.add('access change feed', changeFeed, (feed) => feed.close());
  const limiter = buildLimiter(config, storage, logger, metrics, redis, limiterOfPrimary);
  lifetime.add('limiter', limiter, (limits) => limits.close());

  // Stored responses are written in batches like the log, and the last ones at shutdown (before the database closes).
  const responses = new ResponseStore({
    db: storage.database.db,
    sqlite: storage.database.sqlite,
    sqliteWorker: storage.sqliteWorker,
    logger,
    batchSize: Math.min(config.requestLog.batchSize, responsesBatchSize),
    flushIntervalMs: config.requestLog.flushIntervalMs,
    maxQueue: config.requestLog.maxQueue,
    maxConversationBytes: config.responses.maxConversationBytes,
    streamLeaseMs: streamLeaseMs(config.responses.streamLeaseMs, config.requestLog.flushIntervalMs),
  });
  responses.start();
  lifetime.add('stored responses', responses, (store) => store.close());

  await registry.warmUp();
  const dataPlane = createDataPlane({
    responses,
    config,
    catalog,
    authenticator,
    router,
    dispatcher,
    logWriter: storage.logWriter,
    metrics,
    logger,
    limiter,
  });
  metricsSources.inFlight = () => dataPlane.inFlight;
  return { dataPlane, authenticator, redis, healthStore };
}
