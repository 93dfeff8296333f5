import type { AddressInfo } from 'node:net';
import { publishAccessChange } from '../access/change-feed.js';
import type { ModelCatalog } from '../access/policy.js';
import type { ManagementServices } from '../api/manage/services.js';
import type { Config } from '../config/schema.js';
import { apiError } from '../errors/api-error.js';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import { packageVersion } from '../package-files.js';
import { GitHubSigningKeys } from '../secret-scanning/github-keys.js';
import { buildApp } from '../server/build-app.js';
import { loadConsoleAssets } from '../server/console-assets.js';
import { startMetricsServer } from '../server/metrics-endpoint.js';
import { reclaimMemoryWhenIdle } from '../server/reclaim-memory-when-idle.js';
import { FlexibleInvitationLimit, type InvitationLimit, invitationLimitPolicy } from '../users/invitation-limit.js';
import { IpcInvitationLimit } from '../users/ipc-invitation-limit.js';
import { IpcSignInThrottle } from '../users/ipc-sign-in-throttle.js';
import { hashPassword } from '../users/password.js';
import { RedisSignInThrottle } from '../users/redis-sign-in-throttle.js';
import { startSessionSweeper } from '../users/sessions.js';
import { MemorySignInThrottle, type SignInThrottle, signInThrottlePolicy } from '../users/sign-in-throttle.js';
import type { DataPlaneParts } from './build-data-plane.js';
import type { Storage } from './build-storage.js';
import type { Lifetime } from './lifetime.js';
import { describeListenError, ListenError } from './listen-error.js';

/** The management API's services (for the console), with the ones that have a lifetime registered to close. */
function buildManagement(
  config: Config,
  catalog: ModelCatalog,
  storage: Storage,
  parts: DataPlaneParts,
  logger: Logger,
  lifetime: Lifetime,
  clusterWorker: boolean,
): ManagementServices {
  const policy = signInThrottlePolicy(config);
  const local = new MemorySignInThrottle(policy);
  const redisClient = parts.redis?.client;
  // Shared by every node through Redis when there is one, by the workers of one node through their primary,
  // else this process's own count.
  const signInThrottle: SignInThrottle = redisClient
    ? new RedisSignInThrottle({ redis: redisClient, keyPrefix: config.redis.keyPrefix, policy, local, logger })
    : clusterWorker
      ? new IpcSignInThrottle(local, logger)
      : local;
  lifetime.add('sign-in throttle', signInThrottle, (throttle) => throttle.close());
  // Shared the same way: Redis (with this process's count as the library's fallback), else the primary, else here.
  const limitPolicy = invitationLimitPolicy(config);
  const invitationLimit: InvitationLimit = redisClient
    ? new FlexibleInvitationLimit(limitPolicy, { client: redisClient, keyPrefix: config.redis.keyPrefix, logger })
    : clusterWorker
      ? new IpcInvitationLimit(new FlexibleInvitationLimit(limitPolicy), logger)
      : new FlexibleInvitationLimit(limitPolicy);
  lifetime.add('invitation limit', invitationLimit, (limit) => limit.close());
  const sweeper = startSessionSweeper(storage.database.db, 3_600_000, (error) =>
    logger.warn({ err: error }, 'could not delete ended console sessions'),
  );
  lifetime.add('session sweeper', sweeper, (sessions) => sessions.close());
  const redis = parts.redis?.client;
  return {
    config,
    database: storage.database,
    catalog,
    secret: storage.secret,
    logger,
    signInThrottle,
    invitationLimit,
    secretScanningKeys: config.secretScanning.enabled
      ? new GitHubSigningKeys({
          url: config.secretScanning.publicKeysUrl,
          configured: config.secretScanning.publicKeys,
          cacheMs: config.secretScanning.publicKeysCacheMs,
          logger,
        })
      : undefined,
    // Hashed once per process, off the request path; verified against when a sign-in names an unknown address.
    decoyPasswordHash: hashPassword('decoy password that nobody has'),
    // This node forgets its cached keys at once; the others hear it through Redis (or their database poll).
    onAccessChanged: () => {
      parts.authenticator.invalidateAll();
      if (redis) {
        publishAccessChange(redis, config.redis.keyPrefix).catch((error: unknown) =>
          logger.warn({ err: error }, 'could not announce an access change through Redis; other nodes poll for it'),
        );
      }
    },
  };
}

/**
 * The HTTP server on its port. Stopping it is the first step of a shutdown: no new connections, in-flight requests
 * finish until the deadline, then whatever is left is cut short (streams get an in-band error).
 */
export async function listen(
  config: Config,
  catalog: ModelCatalog,
  storage: Storage,
  parts: DataPlaneParts,
  logger: Logger,
  metrics: Metrics,
  lifetime: Lifetime,
  options: { clusterWorker: boolean },
): Promise<{ url: string; port: number; metricsUrl: string | undefined }> {
  const { dataPlane } = parts;
  const management = config.console.enabled
    ? {
        services: buildManagement(config, catalog, storage, parts, logger, lifetime, options.clusterWorker),
        consoleAssets: loadConsoleAssets(),
        version: packageVersion(),
      }
    : undefined;
  const app = buildApp({
    dataPlane,
    database: storage.database,
    metrics,
    logger,
    redis: parts.redis?.client,
    management,
    http: {
      apiBodyTimeoutMs: config.server.apiBodyTimeoutMs,
      v1BodyTimeoutMs: config.server.v1BodyTimeoutMs,
      maxConnections: config.server.maxConnections,
      maxPipelinedRequests: config.server.maxPipelinedRequests,
      trustProxy: config.console.trustProxy,
    },
    metricsEndpoint: { onMainPort: config.metrics.port === undefined, bearerToken: config.metrics.bearerToken },
  });
  try {
    await app.listen({ host: config.server.host, port: config.server.port });
  } catch (error) {
    await app.close();
    throw new ListenError(describeListenError(error, config.server.host, config.server.port, 'the gateway'));
  }
  lifetime.add('http server', app, async (_app, deadline) => {
    logger.info({ inFlight: dataPlane.inFlight }, 'shutting down: finishing in-flight requests');
    app.server.close();
    app.server.closeIdleConnections();
    if ((await waitUntil(dataPlane.idle(), deadline)) === 'deadline') {
      logger.warn({ inFlight: dataPlane.inFlight }, 'shutdown deadline passed: interrupting the remaining requests');
      dataPlane.abortAll(
        apiError('server_shutting_down', 'The server is shutting down; retry the request.', {
          headers: { 'retry-after': '1', 'retry-after-ms': '1000' },
        }),
      );
      await waitUntil(dataPlane.idle(), Date.now() + 2000);
    }
    app.server.closeAllConnections();
    await app.close();
  });
  const stopReclaiming = reclaimMemoryWhenIdle({
    started: () => dataPlane.started,
    inFlight: () => dataPlane.inFlight,
    logger,
    alsoCollect: () => storage.sqliteWorker?.collectGarbage(),
  });
  lifetime.add('idle memory reclaim', stopReclaiming, (stop) => stop());

  // /metrics on a listener of its own when metrics.port is set (the main port then answers 404 for it).
  let metricsUrl: string | undefined;
  if (config.metrics.port !== undefined) {
    const host = config.metrics.host;
    const port = config.metrics.port;
    const metricsServer = await startMetricsServer({
      host,
      port,
      metrics,
      bearerToken: config.metrics.bearerToken,
    }).catch((error: unknown) => {
      throw new ListenError(
        describeListenError(error, host, port, 'the metrics listener (metrics.host, metrics.port)'),
      );
    });
    metricsUrl = metricsServer.url;
    lifetime.add('metrics listener', metricsServer, (server) => server.close());
  }

  const address = app.server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return { url: `http://${host}:${address.port}`, port: address.port, metricsUrl };
}

/** Resolves with 'done' when the promise settles, or 'deadline' when the deadline comes first. */
async function waitUntil(promise: Promise<unknown>, deadline: number): Promise<'done' | 'deadline'> {
  let timer: NodeJS.Timeout | undefined;
  const passed = new Promise<'deadline'>((resolve) => {
    timer = setTimeout(() => resolve('deadline'), Math.max(0, deadline - Date.now()));
  });
  try {
    return await Promise.race([promise.then(() => 'done' as const), passed]);
  } finally {
    clearTimeout(timer);
  }
}
