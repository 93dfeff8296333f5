import { createPublicKey } from 'node:crypto';
import { z } from 'zod';
import { limitSettingsSchema, noLimits } from '../limits/settings.js';
import { embeddingProviderTypes, modelSchema, routingSchema } from './model-schemas.js';
import { providerSchema } from './provider-schemas.js';
import { duration, size, timerDuration } from './schema-fields.js';

/**
 * The configuration file's schema. YAML keys are snake_case (operators' convention); each object is transformed into
 * the camelCase `Config` the code uses, so the rest of the program never sees the file's spelling.
 */

const serverSchema = z
  .strictObject({
    host: z.string().min(1).default('127.0.0.1'),
    port: z.number().int().min(0).max(65535).default(8080),
    data_dir: z.string().min(1).default('./data'),
    /** Origins allowed to call /v1 from a browser. Empty by default: API keys belong on servers. */
    cors_allowed_origins: z.array(z.string().min(1)).default([]),
    /** How often an SSE comment is sent while a stream waits for its first upstream event. */
    stream_keepalive: timerDuration.default(15_000),
    /**
     * A streaming client that takes no data for this long (it stopped reading, or vanished without closing its
     * connection) is given up as if it had disconnected: its upstream call or local generation is stopped.
     */
    send_timeout: timerDuration.default(60_000),
    /** How long SIGTERM waits for in-flight requests before aborting them. */
    shutdown_timeout: timerDuration.default(30_000),
    /** A request to /api (console, management API) must have arrived whole this long after it started, or 408. */
    api_body_timeout: timerDuration.default(30_000),
    /**
     * The same for /v1. Longer than /api's: a body may be up to limits.max_body_size (16 MB) from a client on a slow
     * uplink (2 MB at 256 kbit/s takes about 65 s).
     */
    v1_body_timeout: timerDuration.default(120_000),
    /** Open connections at most; further ones are closed at once (counted in switchboard_connections_dropped_total). */
    max_connections: z.number().int().min(1).max(1_000_000).default(10_000),
    /** Requests pipelined on one HTTP/1.1 connection served at once; later ones wait, and the connection is not read. */
    max_pipelined_requests: z.number().int().min(1).max(1000).default(8),
  })
  .superRefine((server, context) => {
    for (const field of ['api_body_timeout', 'v1_body_timeout', 'send_timeout'] as const) {
      if (server[field] < 100) context.addIssue({ code: 'custom', path: [field], message: 'must be at least 100ms' });
    }
  })
  .transform((server) => ({
    host: server.host,
    port: server.port,
    dataDir: server.data_dir,
    corsAllowedOrigins: server.cors_allowed_origins,
    streamKeepaliveMs: server.stream_keepalive,
    sendTimeoutMs: server.send_timeout,
    shutdownTimeoutMs: server.shutdown_timeout,
    apiBodyTimeoutMs: server.api_body_timeout,
    v1BodyTimeoutMs: server.v1_body_timeout,
    maxConnections: server.max_connections,
    maxPipelinedRequests: server.max_pipelined_requests,
  }));

const metricsSchema = z
  .strictObject({
    /** Serve /metrics on this port of its own (and not on the main one), e.g. to keep it off the public network. */
    port: z.number().int().min(0).max(65535).optional(),
    /** The address of that port. */
    host: z.string().min(1).default('127.0.0.1'),
    /** When set, /metrics answers only requests with `Authorization: Bearer <token>`. */
    bearer_token: z.preprocess(
      (value) => (value === '' ? undefined : value),
      z.string().min(16, 'must be at least 16 characters').optional(),
    ),
  })
  .transform((metrics) => ({ port: metrics.port, host: metrics.host, bearerToken: metrics.bearer_token }));

const databaseSchema = z
  .strictObject({
    /** SQLite file; relative paths are resolved against server.data_dir. Used when `url` is not set. */
    sqlite_path: z.string().min(1).default('switchboard.db'),
    /** PostgreSQL connection URL (postgres://user:password@host:5432/db); when set, PostgreSQL is the database. */
    url: z.preprocess(
      (value) => (value === '' ? undefined : value),
      z
        .string()
        .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
        .optional(),
    ),
    /** Connections per gateway process (PostgreSQL only). */
    pool_size: z.number().int().min(1).max(200).default(10),
  })
  .transform((database) => ({ sqlitePath: database.sqlite_path, url: database.url, poolSize: database.pool_size }));

const keysSchema = z
  .strictObject({
    /** HMAC secret for stored key hashes; when absent a random one is generated once in the data directory. */
    // An empty value (e.g. `${SWITCHBOARD_KEY_SECRET:-}` with the variable unset) means "not configured".
    secret: z.preprocess(
      (value) => (value === '' ? undefined : value),
      z.string().min(32, 'must be at least 32 characters').optional(),
    ),
    /** Upper bound on how long a verified key is trusted from memory, on top of explicit invalidation. */
    cache_ttl: duration.default(60_000),
    /** How often the server looks for key and access changes made by other processes (the CLI, other nodes). */
    change_poll_interval: timerDuration.default(250),
  })
  .transform((keys) => ({
    secret: keys.secret,
    cacheTtlMs: keys.cache_ttl,
    changePollIntervalMs: keys.change_poll_interval,
  }));

/** Rollups are kept for 400 days by default: a year-on-year comparison, at a few hundred bytes per key, model, hour. */
const defaultRollupRetentionMs = 400 * 86_400_000;

const requestLogSchema = z
  .strictObject({
    // Under load a batch fills in tens of milliseconds; with many accounts, larger batches put more rows in each index
    // page a commit writes (docs/performance.md, "The request-log store").
    batch_size: z.number().int().min(1).max(5000).default(2000),
    flush_interval: timerDuration.default(1000),
    /** Records held in memory before new requests wait for the writer (backpressure, never silent drops). */
    max_queue: z.number().int().min(100).default(50_000),
    /** Rows older than this are deleted (and their disk space freed); 0 keeps everything. */
    retention: duration.default(30 * 86_400_000),
    /** How often the retention job runs (it also runs shortly after start-up). */
    retention_interval: timerDuration.default(3_600_000),
    /** Rows deleted per statement; small batches keep every statement short so requests are never stalled. */
    retention_batch_size: z.number().int().min(100).max(100_000).default(2000),
    /**
     * Usage rollups (hourly and daily sums that usage reports read) older than this are deleted; 0 keeps them. They
     * are a few hundred bytes per account, key, model and hour, so they can outlive the raw rows by far.
     */
    rollup_retention: duration.optional(),
  })
  .refine((log) => !log.rollup_retention || log.retention === 0 || log.rollup_retention >= log.retention, {
    message: 'rollup_retention must be 0 (keep) or at least retention: usage is read from the rollups',
    path: ['rollup_retention'],
  })
  .transform((log) => ({
    batchSize: log.batch_size,
    flushIntervalMs: log.flush_interval,
    maxQueue: log.max_queue,
    retentionMs: log.retention,
    retentionIntervalMs: log.retention_interval,
    retentionBatchSize: log.retention_batch_size,
    // While every raw row is kept, so are their rollups: usage must cover what the log shows.
    rollupRetentionMs:
      log.retention === 0 ? 0 : (log.rollup_retention ?? Math.max(defaultRollupRetentionMs, log.retention)),
  }));

const limitsSchema = z
  .strictObject({
    /** Largest accepted request body. Coding agents send 1-2 MB, so the default leaves room. */
    max_body_size: size.default(16 * 1024 * 1024),
    /** Limits of every account unless set on the account itself (CLI or management API). */
    account_defaults: limitSettingsSchema.default(noLimits),
    /** Limits of every key unless set on the key itself. */
    key_defaults: limitSettingsSchema.default(noLimits),
    /** Tokens reserved for the answer when a request sets no max_tokens; settled to the real count afterwards. */
    completion_token_reserve: z.number().int().min(0).default(1024),
  })
  .transform((limits) => ({
    maxBodyBytes: limits.max_body_size,
    accountDefaults: limits.account_defaults,
    keyDefaults: limits.key_defaults,
    completionTokenReserve: limits.completion_token_reserve,
  }));

const fallbackPolicy = z.enum(['local', 'allow', 'deny']);

/** Stored `/v1/responses` state: what `previous_response_id`, `GET /v1/responses/{id}` and item references read. */
const responsesSchema = z
  .strictObject({
    /** A stored response is deleted this long after it was created; a conversation up to 10% later. */
    retention: duration.default(30 * 86_400_000),
    /** Largest stored response (its input items, output and settings as JSON); larger ones get a 400 unless `store: false`. */
    max_stored_bytes: size.default(16 * 1024 * 1024),
    /**
     * Largest conversation `previous_response_id` replays (its stored responses together): reading it is bounded in
     * memory, and a longer one gets a 400 (four responses of the largest size).
     */
    max_conversation_bytes: size.default(64 * 1024 * 1024),
    /** Expired responses deleted per statement by the retention job. */
    retention_batch_size: z.number().int().min(10).max(100_000).default(500),
    /**
     * How long a node's word that a stored response is still streaming holds (it renews it every quarter of this while
     * the stream runs): a stream whose node stopped without ending it reads as failed this long after its last renewal.
     */
    stream_lease: timerDuration.default(60_000),
  })
  .superRefine((responses, context) => {
    if (responses.stream_lease < 1000) {
      context.addIssue({ code: 'custom', path: ['stream_lease'], message: 'must be at least 1s' });
    }
  })
  .transform((responses) => ({
    retentionMs: responses.retention,
    maxStoredBytes: responses.max_stored_bytes,
    maxConversationBytes: responses.max_conversation_bytes,
    retentionBatchSize: responses.retention_batch_size,
    streamLeaseMs: responses.stream_lease,
  }));

const redisSchema = z
  .strictObject({
    /** redis://[user:password@]host:6379[/db]; when set, limits and budgets are shared by every node. */
    url: z.preprocess(
      (value) => (value === '' ? undefined : value),
      z
        .string()
        .regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL')
        .optional(),
    ),
    key_prefix: z.string().default('switchboard:'),
    /** A Redis command slower than this counts as Redis being unavailable. */
    command_timeout: timerDuration.default(500),
    /**
     * A concurrency slot taken in Redis is renewed by its node while the request runs and expires this long after the
     * node stops renewing it (the node died), so a killed node's slots come back by themselves.
     */
    concurrency_lease_ttl: timerDuration.refine((ms) => ms >= 1000, 'must be at least 1s').default(30_000),
    on_unavailable: z
      .strictObject({
        /** local: this node's own counters; allow: no rate limits; deny: refuse with 503. */
        rate_limits: fallbackPolicy.default('local'),
        /** Budgets fail closed by default: spending unchecked is worse than refusing for a moment. */
        budgets: fallbackPolicy.default('deny'),
      })
      .default({ rate_limits: 'local', budgets: 'deny' }),
  })
  .transform((redis) => ({
    url: redis.url,
    keyPrefix: redis.key_prefix,
    commandTimeoutMs: redis.command_timeout,
    concurrencyLeaseTtlMs: redis.concurrency_lease_ttl,
    onUnavailable: { rateLimits: redis.on_unavailable.rate_limits, budgets: redis.on_unavailable.budgets },
  }));

const loggingSchema = z
  .strictObject({
    level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  })
  .transform((logging) => ({ level: logging.level }));

const consoleSchema = z
  .strictObject({
    /** Serve the web console at /console and the management API at /api. */
    enabled: z.boolean().default(true),
    /** A session ends this long after sign-in, however active it is. */
    session_ttl: duration.default(7 * 86_400_000),
    /** A session ends after this long without a request. */
    session_idle_timeout: duration.default(12 * 3_600_000),
    /** Secure cookies: auto = when the request came over TLS (directly, or per X-Forwarded-Proto with trust_proxy). */
    secure_cookies: z.enum(['auto', 'always', 'never']).default('auto'),
    /** Believe X-Forwarded-Proto / X-Forwarded-For (only behind a proxy that sets them). */
    trust_proxy: z.boolean().default(false),
    /** The console's public address (e.g. https://gw.example.com), used in invitation links printed by the CLI. */
    public_url: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional(),
    /**
     * Failed sign-ins per (client address, user) answered at once; after them each attempt from that client for that
     * user waits twice as long as the one before, from 1 s up to sign_in_max_delay. A client gets 3x as many over all
     * users. Nothing is counted per user alone, so nobody can lock a user out from another address.
     */
    sign_in_max_failures: z.number().int().min(1).max(1000).default(5),
    sign_in_max_delay: timerDuration.default(15 * 60_000),
    /** A client's failures are forgotten this long after its last one. */
    sign_in_window: duration.default(60 * 60_000),
    /** How long an invitation link stays valid. */
    invitation_ttl: duration.default(7 * 86_400_000),
    /** Invitations one account may get through the management API per invitation_limit_window. */
    invitation_limit_per_account: z.number().int().min(1).max(100_000).default(100),
    /** Invitations one user (owner or admin, session or token) may make through the API per invitation_limit_window. */
    invitation_limit_per_user: z.number().int().min(1).max(100_000).default(30),
    invitation_limit_window: duration.default(60 * 60_000),
    /** Open invitations an account may have at once through the API (the operator's CLI is not limited). */
    max_pending_invitations: z.number().int().min(1).max(100_000).default(200),
  })
  .transform((console) => ({
    enabled: console.enabled,
    sessionTtlMs: console.session_ttl,
    sessionIdleTimeoutMs: console.session_idle_timeout,
    secureCookies: console.secure_cookies,
    trustProxy: console.trust_proxy,
    publicUrl: console.public_url?.replace(/\/+$/, ''),
    signInMaxFailures: console.sign_in_max_failures,
    signInMaxDelayMs: console.sign_in_max_delay,
    signInWindowMs: console.sign_in_window,
    invitationTtlMs: console.invitation_ttl,
    invitationLimitPerAccount: console.invitation_limit_per_account,
    invitationLimitPerUser: console.invitation_limit_per_user,
    invitationLimitWindowMs: console.invitation_limit_window,
    maxPendingInvitations: console.max_pending_invitations,
  }));

const secretScanningSchema = z
  .strictObject({
    /** Serve POST /api/secret-scanning/github, where GitHub's secret scanning reports leaked keys (revoked at once). */
    enabled: z.boolean().default(false),
    /** Where the signature verification keys are fetched from, in the format of GitHub's meta endpoint. */
    public_keys_url: z
      .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
      .default('https://api.github.com/meta/public_keys/secret_scanning'),
    /** Verification keys given here are used without fetching (an air-gapped gateway; tests). */
    public_keys: z
      .array(
        z.strictObject({
          key_identifier: z.string().min(1),
          key: z.string().refine((pem) => {
            try {
              createPublicKey(pem);
              return true;
            } catch {
              return false;
            }
          }, 'is not a PEM public key'),
        }),
      )
      .default([]),
    /** How long fetched keys are reused before they are fetched again. */
    public_keys_cache: duration.default(3_600_000),
  })
  .transform((scanning) => ({
    enabled: scanning.enabled,
    publicKeysUrl: scanning.public_keys_url,
    publicKeys: scanning.public_keys.map((entry) => ({ keyIdentifier: entry.key_identifier, pem: entry.key })),
    publicKeysCacheMs: scanning.public_keys_cache,
  }));

/** Adds `name` to the names seen so far; a name seen already is reported at `path` (`<what> "<name>"<why>`). */
function addUnique(
  seen: Set<string>,
  name: string,
  context: z.RefinementCtx,
  path: (string | number)[],
  what: string,
  why = '',
): void {
  if (seen.has(name)) context.addIssue({ code: 'custom', path, message: `${what} "${name}"${why}` });
  seen.add(name);
}

export const configSchema = z
  .strictObject({
    server: serverSchema.default(serverSchema.parse({})),
    database: databaseSchema.default(databaseSchema.parse({})),
    keys: keysSchema.default(keysSchema.parse({})),
    request_log: requestLogSchema.default(requestLogSchema.parse({})),
    limits: limitsSchema.default(limitsSchema.parse({})),
    redis: redisSchema.default(redisSchema.parse({})),
    logging: loggingSchema.default(loggingSchema.parse({})),
    metrics: metricsSchema.default(metricsSchema.parse({})),
    routing: routingSchema.default(routingSchema.parse({})),
    console: consoleSchema.default(consoleSchema.parse({})),
    responses: responsesSchema.default(responsesSchema.parse({})),
    secret_scanning: secretScanningSchema.default(secretScanningSchema.parse({})),
    providers: z.array(providerSchema).default([]),
    models: z.array(modelSchema).default([]),
  })
  .superRefine((config, context) => {
    const providerNames = new Set<string>();
    const providerTypes = new Map<string, string>();
    config.providers.forEach((provider, index) => {
      providerTypes.set(provider.name, provider.type);
      addUnique(providerNames, provider.name, context, ['providers', index, 'name'], 'duplicate provider name');
    });
    const modelNames = new Set<string>();
    config.models.forEach((model, index) => {
      addUnique(modelNames, model.name, context, ['models', index, 'name'], 'duplicate model name');
      const known = [...providerNames].join(', ') || 'none';
      const deploymentIds = new Set<string>();
      // A model whose own checks failed arrives here untransformed.
      (model.deployments ?? []).forEach((deployment, deploymentIndex) => {
        // The short form has one implicit deployment; its problems are reported on the model's own field.
        const path = model.shortForm
          ? ['models', index, 'provider']
          : ['models', index, 'deployments', deploymentIndex, 'provider'];
        if (!providerNames.has(deployment.provider)) {
          context.addIssue({
            code: 'custom',
            path,
            message: `unknown provider "${deployment.provider}" (defined providers: ${known})`,
          });
        }
        addUnique(
          deploymentIds,
          deployment.id,
          context,
          ['models', index, 'deployments', deploymentIndex],
          'duplicate deployment',
          ' (the same provider and upstream model twice)',
        );
        const type = providerTypes.get(deployment.provider);
        if (model.capabilities?.includes('embeddings') && type !== undefined && !embeddingProviderTypes.has(type)) {
          context.addIssue({
            code: 'custom',
            path: ['models', index, 'capabilities'],
            message: `"embeddings" needs a provider with an embeddings API; "${deployment.provider}" is of type ${type}, which has none`,
          });
        }
        if (model.responsesApi === 'native' && type !== undefined && type !== 'openai') {
          context.addIssue({
            code: 'custom',
            path: ['models', index, 'responses_api'],
            message: `"native" needs OpenAI-compatible providers; "${deployment.provider}" is of type ${type}`,
          });
        }
      });
    });
    config.models.forEach((model, index) => {
      (model.fallbacks ?? []).forEach((fallback, fallbackIndex) => {
        const path = ['models', index, 'fallbacks', fallbackIndex];
        if (fallback === model.name) {
          context.addIssue({ code: 'custom', path, message: 'a model cannot be its own fallback' });
        } else if (!modelNames.has(fallback)) {
          context.addIssue({ code: 'custom', path, message: `unknown model "${fallback}"` });
        }
      });
    });
  })
  .transform((config) => ({
    server: config.server,
    database: config.database,
    keys: config.keys,
    requestLog: config.request_log,
    limits: config.limits,
    redis: config.redis,
    logging: config.logging,
    metrics: config.metrics,
    routing: config.routing,
    console: config.console,
    responses: config.responses,
    secretScanning: config.secret_scanning,
    providers: config.providers,
    // Each model's retry policy is the routing default with the model's own overrides applied.
    models: config.models.map(({ retryOverrides, shortForm: _shortForm, ...model }) => ({
      ...model,
      retry: {
        attempts: retryOverrides?.attempts ?? config.routing.retry.attempts,
        initialBackoffMs: retryOverrides?.initial_backoff ?? config.routing.retry.initialBackoffMs,
        maxBackoffMs: retryOverrides?.max_backoff ?? config.routing.retry.maxBackoffMs,
        maxRetryAfterMs: retryOverrides?.max_retry_after ?? config.routing.retry.maxRetryAfterMs,
      },
    })),
  }));

export type { ModelCapability } from './model-schemas.js';
export type Config = z.output<typeof configSchema>;
export type ProviderConfig = Config['providers'][number];
export type ProviderType = ProviderConfig['type'];
export type ProviderConfigOf<Type extends ProviderType> = Extract<ProviderConfig, { type: Type }>;
export type OpenAiProviderConfig = ProviderConfigOf<'openai'>;
export type LocalProviderConfig = ProviderConfigOf<'local'>;
export type ModelConfig = Config['models'][number];
export type ModelPricing = NonNullable<ModelConfig['pricing']>;
export type DeploymentConfig = ModelConfig['deployments'][number];
export type RoutingConfig = Config['routing'];
