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

const openAiProviderSchema = z
  .strictObject({
    name,
    type: z.literal('openai'),
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

/** A GGUF model run in-process by node-llama-cpp (see docs/local-model.md). */
const localProviderSchema = z
  .strictObject({
    name,
    type: z.literal('local'),
    /** The GGUF file; relative paths are resolved against server.data_dir. */
    model_path: z.string().min(1),
    /** Tokens one request may hold (prompt + completion). Default: the model's training context, at most 4096. */
    context_size: z.number().int().min(64).max(1_048_576).optional(),
    /** CPU threads for evaluation. Default: one fewer than the machine's cores (the other serves HTTP), at least 1. */
    threads: z.number().int().min(1).max(1024).optional(),
    /** Requests generated at the same time, batched together (each holds its own context of context_size tokens). */
    max_concurrent: z.number().int().min(1).max(256).default(4),
    /** Requests waiting for a free slot; beyond that the provider answers 503 with retry-after. */
    queue_size: z.number().int().min(0).max(100_000).default(64),
    /** Longest wait in the queue before a request is answered 503. */
    queue_timeout: duration.default(60_000),
    /** Tokens evaluated per batch (prompt processing). */
    batch_size: z.number().int().min(1).max(65_536).optional(),
    /** "auto" uses a GPU when node-llama-cpp finds one (CUDA, Vulkan, Metal), else the CPU. */
    gpu: z.enum(['auto', 'cpu', 'cuda', 'vulkan', 'metal']).default('auto'),
    /** A Jinja chat template that replaces the one in the GGUF metadata. */
    chat_template: z.string().min(1).optional(),
    /** max_tokens applied when a request sets none (default: up to the end of the context). */
    default_max_tokens: z.number().int().min(1).optional(),
  })
  .transform((provider) => ({
    name: provider.name,
    type: provider.type,
    modelPath: provider.model_path,
    contextSize: provider.context_size,
    threads: provider.threads,
    maxConcurrent: provider.max_concurrent,
    queueSize: provider.queue_size,
    queueTimeoutMs: provider.queue_timeout,
    batchSize: provider.batch_size,
    gpu: provider.gpu,
    chatTemplate: provider.chat_template,
    defaultMaxTokens: provider.default_max_tokens,
  }));

const providerSchema = z.discriminatedUnion('type', [openAiProviderSchema, localProviderSchema]);

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
    providers: config.providers,
    models: config.models,
  }));

export type Config = z.output<typeof configSchema>;
export type ProviderConfig = Config['providers'][number];
export type ProviderType = ProviderConfig['type'];
export type ProviderConfigOf<Type extends ProviderType> = Extract<ProviderConfig, { type: Type }>;
export type OpenAiProviderConfig = ProviderConfigOf<'openai'>;
export type LocalProviderConfig = ProviderConfigOf<'local'>;
export type ModelConfig = Config['models'][number];
export type ModelPricing = NonNullable<ModelConfig['pricing']>;
