import { z } from 'zod';
import { parseDuration, parseSize } from './units.js';

/**
 * The configuration file's schema. YAML keys are snake_case (operators' convention); each object is transformed into
 * the camelCase `Config` the code uses, so the rest of the program never sees the file's spelling.
 */

const duration = z.union([z.string(), z.number()]).transform((value, context) => {
  const milliseconds = parseDuration(value);
  if (milliseconds === undefined) {
    context.addIssue({ code: 'custom', message: `"${value}" is not a duration (use e.g. 500ms, 30s, 5m, 24h, 30d)` });
    return z.NEVER;
  }
  return milliseconds;
});

const size = z.union([z.string(), z.number()]).transform((value, context) => {
  const bytes = parseSize(value);
  if (bytes === undefined) {
    context.addIssue({ code: 'custom', message: `"${value}" is not a size (use e.g. 512kb, 16mb)` });
    return z.NEVER;
  }
  return bytes;
});

const name = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:/@-]*$/, 'use letters, digits and . _ : / @ - (starting with a letter or digit)');

const serverSchema = z
  .strictObject({
    host: z.string().min(1).default('127.0.0.1'),
    port: z.number().int().min(0).max(65535).default(8080),
    data_dir: z.string().min(1).default('./data'),
    /** Origins allowed to call /v1 from a browser. Empty by default: API keys belong on servers. */
    cors_allowed_origins: z.array(z.string().min(1)).default([]),
    /** How often an SSE comment is sent while a stream waits for its first upstream event. */
    stream_keepalive: duration.default(15_000),
    /** How long SIGTERM waits for in-flight requests before aborting them. */
    shutdown_timeout: duration.default(30_000),
  })
  .transform((server) => ({
    host: server.host,
    port: server.port,
    dataDir: server.data_dir,
    corsAllowedOrigins: server.cors_allowed_origins,
    streamKeepaliveMs: server.stream_keepalive,
    shutdownTimeoutMs: server.shutdown_timeout,
  }));

const databaseSchema = z
  .strictObject({
    /** SQLite file; relative paths are resolved against server.data_dir. */
    sqlite_path: z.string().min(1).default('switchboard.db'),
  })
  .transform((database) => ({ sqlitePath: database.sqlite_path }));

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
    change_poll_interval: duration.default(250),
  })
  .transform((keys) => ({
    secret: keys.secret,
    cacheTtlMs: keys.cache_ttl,
    changePollIntervalMs: keys.change_poll_interval,
  }));

const requestLogSchema = z
  .strictObject({
    batch_size: z.number().int().min(1).max(5000).default(500),
    flush_interval: duration.default(1000),
    /** Records held in memory before new requests wait for the writer (backpressure, never silent drops). */
    max_queue: z.number().int().min(100).default(50_000),
  })
  .transform((log) => ({ batchSize: log.batch_size, flushIntervalMs: log.flush_interval, maxQueue: log.max_queue }));

const limitsSchema = z
  .strictObject({
    /** Largest accepted request body. Coding agents send 1-2 MB, so the default leaves room. */
    max_body_size: size.default(16 * 1024 * 1024),
  })
  .transform((limits) => ({ maxBodyBytes: limits.max_body_size }));

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
    /** Failed sign-ins allowed per e-mail address (and 3x that per client address) within sign_in_window. */
    sign_in_max_failures: z.number().int().min(1).max(1000).default(10),
    sign_in_window: duration.default(15 * 60_000),
    /** How long an invitation link stays valid. */
    invitation_ttl: duration.default(7 * 86_400_000),
  })
  .transform((console) => ({
    enabled: console.enabled,
    sessionTtlMs: console.session_ttl,
    sessionIdleTimeoutMs: console.session_idle_timeout,
    secureCookies: console.secure_cookies,
    trustProxy: console.trust_proxy,
    publicUrl: console.public_url?.replace(/\/+$/, ''),
    signInMaxFailures: console.sign_in_max_failures,
    signInWindowMs: console.sign_in_window,
    invitationTtlMs: console.invitation_ttl,
  }));

const timeoutsSchema = z
  .strictObject({
    connect: duration.default(10_000),
    /** Until the upstream's response headers arrive (for non-streaming requests: the whole generation). */
    first_byte: duration.default(300_000),
    /** Longest silence between two chunks of an upstream body. */
    idle: duration.default(120_000),
  })
  .transform((timeouts) => ({
    connectMs: timeouts.connect,
    firstByteMs: timeouts.first_byte,
    idleMs: timeouts.idle,
  }));

const providerSchema = z
  .strictObject({
    name,
    type: z.enum(['openai']),
    base_url: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }),
    api_key: z.string().optional(),
    headers: z.record(z.string(), z.string()).default({}),
    timeouts: timeoutsSchema.default(timeoutsSchema.parse({})),
    max_connections: z.number().int().min(1).max(10_000).default(256),
  })
  .transform((provider) => ({
    name: provider.name,
    type: provider.type,
    baseUrl: provider.base_url.replace(/\/+$/, ''),
    apiKey: provider.api_key,
    headers: provider.headers,
    timeouts: provider.timeouts,
    maxConnections: provider.max_connections,
  }));

/** Prices in US dollars per million tokens. */
const pricingSchema = z
  .strictObject({
    input: z.number().min(0),
    output: z.number().min(0),
    cached_input: z.number().min(0).optional(),
    reasoning: z.number().min(0).optional(),
  })
  .transform((pricing) => ({
    inputPerMillion: pricing.input,
    outputPerMillion: pricing.output,
    cachedInputPerMillion: pricing.cached_input ?? pricing.input,
    reasoningPerMillion: pricing.reasoning ?? pricing.output,
  }));

const modelSchema = z
  .strictObject({
    name,
    provider: z.string().min(1),
    upstream_model: z.string().min(1).optional(),
    owned_by: z.string().min(1).optional(),
    context_window: z.number().int().min(1).optional(),
    pricing: pricingSchema.optional(),
  })
  .transform((model) => ({
    name: model.name,
    provider: model.provider,
    upstreamModel: model.upstream_model ?? model.name,
    ownedBy: model.owned_by ?? model.provider,
    contextWindow: model.context_window,
    pricing: model.pricing,
  }));

export const configSchema = z
  .strictObject({
    server: serverSchema.default(serverSchema.parse({})),
    database: databaseSchema.default(databaseSchema.parse({})),
    keys: keysSchema.default(keysSchema.parse({})),
    request_log: requestLogSchema.default(requestLogSchema.parse({})),
    limits: limitsSchema.default(limitsSchema.parse({})),
    logging: loggingSchema.default(loggingSchema.parse({})),
    console: consoleSchema.default(consoleSchema.parse({})),
    providers: z.array(providerSchema).default([]),
    models: z.array(modelSchema).default([]),
  })
  .superRefine((config, context) => {
    const providerNames = new Set<string>();
    config.providers.forEach((provider, index) => {
      if (providerNames.has(provider.name)) {
        context.addIssue({
          code: 'custom',
          path: ['providers', index, 'name'],
          message: `duplicate provider name "${provider.name}"`,
        });
      }
      providerNames.add(provider.name);
    });
    const modelNames = new Set<string>();
    config.models.forEach((model, index) => {
      if (modelNames.has(model.name)) {
        context.addIssue({
          code: 'custom',
          path: ['models', index, 'name'],
          message: `duplicate model name "${model.name}"`,
        });
      }
      modelNames.add(model.name);
      if (!providerNames.has(model.provider)) {
        const known = [...providerNames].join(', ') || 'none';
        context.addIssue({
          code: 'custom',
          path: ['models', index, 'provider'],
          message: `unknown provider "${model.provider}" (defined providers: ${known})`,
        });
      }
    });
  })
  .transform((config) => ({
    server: config.server,
    database: config.database,
    keys: config.keys,
    requestLog: config.request_log,
    limits: config.limits,
    logging: config.logging,
    console: config.console,
    providers: config.providers,
    models: config.models,
  }));

export type Config = z.output<typeof configSchema>;
export type ProviderConfig = Config['providers'][number];
export type ModelConfig = Config['models'][number];
export type ModelPricing = NonNullable<ModelConfig['pricing']>;
