import { z } from 'zod';
import { name, timerDuration } from './schema-fields.js';

/** `providers[]`: where requests go, one schema per provider type (the file's keys, transformed to camelCase). */

/**
 * How `/v1/responses` reaches an OpenAI-compatible upstream: `translate` into chat completions (what every
 * OpenAI-compatible server speaks), or `native`: the client's body forwarded to the upstream's own `/responses` with
 * only the model name changed, so reasoning items, `encrypted_content` and item types unknown to the gateway pass
 * through untouched.
 */
export const responsesApiMode = z.enum(['translate', 'native']);

const timeoutsSchema = z
  .strictObject({
    connect: timerDuration.default(10_000),
    /** Until the upstream's response headers arrive (for non-streaming requests: the whole generation). */
    first_byte: timerDuration.default(300_000),
    /** Longest silence between two chunks of an upstream body. */
    idle: timerDuration.default(120_000),
  })
  .transform((timeouts) => ({
    connectMs: timeouts.connect,
    firstByteMs: timeouts.first_byte,
    idleMs: timeouts.idle,
  }));

/** Settings every provider type shares: its name, credential, extra headers, timeouts and connection pool. */
const providerCommon = {
  name,
  api_key: z.string().optional(),
  headers: z.record(z.string(), z.string()).default({}),
  timeouts: timeoutsSchema.default(timeoutsSchema.parse({})),
  // An HTTP/1.1 connection carries one call at a time and a stream holds it to the end, so a small pool queues streams
  // in the gateway (with 256, the 257th concurrent stream waited for another to finish).
  max_connections: z.number().int().min(1).max(10_000).default(4096),
  /**
   * The most of those one account may hold at once, so that one account's burst of streams cannot queue everyone
   * else's calls (upstream/connection-shares.ts). Default: three quarters of max_connections.
   */
  max_connections_per_account: z.number().int().min(1).max(10_000).optional(),
};

/**
 * Requests go to the URL's origin and path only: credentials, a query or a fragment in it would be dropped without a
 * word (and `config check` would print the credentials), so they are refused with what to use instead.
 */
const httpUrl = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).refine(
  (text) => {
    const url = new URL(text);
    return url.username === '' && url.password === '' && url.search === '' && url.hash === '';
  },
  {
    error:
      'must not hold credentials (user:password@), a query (?…) or a fragment (#…): they would not be sent; ' +
      'give the credential as api_key, or as headers',
  },
);

const commonProviderFields = (provider: {
  name: string;
  api_key?: string | undefined;
  base_url: string;
  headers: Record<string, string>;
  timeouts: z.output<typeof timeoutsSchema>;
  max_connections: number;
  max_connections_per_account?: number | undefined;
}) => ({
  name: provider.name,
  baseUrl: provider.base_url.replace(/\/+$/, ''),
  apiKey: provider.api_key,
  headers: provider.headers,
  timeouts: provider.timeouts,
  maxConnections: provider.max_connections,
  maxConnectionsPerAccount: Math.min(
    provider.max_connections,
    provider.max_connections_per_account ?? Math.max(1, Math.floor((provider.max_connections * 3) / 4)),
  ),
});

/** Any OpenAI-compatible server. */
const openAiProviderSchema = z
  .strictObject({
    ...providerCommon,
    type: z.literal('openai'),
    base_url: httpUrl,
    responses_api: responsesApiMode.default('translate'),
  })
  .transform((provider) => ({
    type: provider.type,
    ...commonProviderFields(provider),
    responsesApi: provider.responses_api,
  }));

/** Anthropic's Messages API. */
const anthropicProviderSchema = z
  .strictObject({
    ...providerCommon,
    type: z.literal('anthropic'),
    base_url: httpUrl.default('https://api.anthropic.com/v1'),
    /** Sent as `anthropic-version`. */
    version: z.string().min(1).default('2023-06-01'),
    /** Sent as `anthropic-beta` (comma-separated) when not empty. */
    beta: z.array(z.string().min(1)).default([]),
  })
  .transform((provider) => ({
    type: provider.type,
    ...commonProviderFields(provider),
    version: provider.version,
    beta: provider.beta,
  }));

/** Google's Gemini API (generativelanguage.googleapis.com). */
const geminiProviderSchema = z
  .strictObject({
    ...providerCommon,
    type: z.literal('gemini'),
    base_url: httpUrl.default('https://generativelanguage.googleapis.com/v1beta'),
  })
  .transform((provider) => ({ type: provider.type, ...commonProviderFields(provider) }));

/** A local generation's bounds on silence (see providers/local/stall-watchdog.ts). */
const localTimeoutsSchema = z
  .strictObject({
    /** Until the first token: the prompt's evaluation included. */
    first_token: timerDuration.default(300_000),
    /** Longest silence between two tokens. */
    idle: timerDuration.default(120_000),
  })
  .transform((timeouts) => ({ firstTokenMs: timeouts.first_token, idleMs: timeouts.idle }));

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
    /** Requests one account may have waiting (default: a quarter of queue_size, at least 1). */
    queue_per_account: z.number().int().min(1).max(100_000).optional(),
    /** Longest wait in the queue before a request is answered 503. */
    queue_timeout: timerDuration.default(60_000),
    /** Tokens evaluated per batch (prompt processing). */
    batch_size: z.number().int().min(1).max(65_536).optional(),
    /** "auto" uses a GPU when node-llama-cpp finds one (CUDA, Vulkan, Metal), else the CPU. */
    gpu: z.enum(['auto', 'cpu', 'cuda', 'vulkan', 'metal']).default('auto'),
    /** A Jinja chat template that replaces the one in the GGUF metadata. */
    chat_template: z.string().min(1).optional(),
    /** max_tokens applied when a request sets none (default: up to the end of the context). */
    default_max_tokens: z.number().int().min(1).optional(),
    /** How long a generation may produce nothing before it is stopped and its client answered 504. */
    timeouts: localTimeoutsSchema.default(localTimeoutsSchema.parse({})),
  })
  .superRefine((provider, context) => {
    if (provider.queue_per_account !== undefined && provider.queue_per_account > provider.queue_size) {
      context.addIssue({
        code: 'custom',
        path: ['queue_per_account'],
        message: `must not exceed queue_size (${provider.queue_size})`,
      });
    }
  })
  .transform((provider) => ({
    name: provider.name,
    type: provider.type,
    modelPath: provider.model_path,
    contextSize: provider.context_size,
    threads: provider.threads,
    maxConcurrent: provider.max_concurrent,
    queueSize: provider.queue_size,
    queuePerAccount: provider.queue_per_account ?? Math.max(1, Math.ceil(provider.queue_size / 4)),
    queueTimeoutMs: provider.queue_timeout,
    batchSize: provider.batch_size,
    gpu: provider.gpu,
    chatTemplate: provider.chat_template,
    defaultMaxTokens: provider.default_max_tokens,
    timeouts: provider.timeouts,
  }));

/** Discriminated on `type`; a new provider type is one more schema in this list. */
export const providerSchema = z.discriminatedUnion('type', [
  openAiProviderSchema,
  anthropicProviderSchema,
  geminiProviderSchema,
  localProviderSchema,
]);
