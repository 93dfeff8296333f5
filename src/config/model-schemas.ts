import { z } from 'zod';
import { responsesApiMode } from './provider-schemas.js';
import { duration, name, timerDuration } from './schema-fields.js';

/** `models[]` and `routing`: the public models, their deployments, prices, retries and circuit breaker. */

/** Prices in US dollars per million tokens. */
const pricingSchema = z
  .strictObject({
    input: z.number().min(0),
    output: z.number().min(0),
    cached_input: z.number().min(0).optional(),
    /** Prompt tokens written to a provider's prompt cache (Anthropic bills them above the input price). */
    cache_write: z.number().min(0).optional(),
    reasoning: z.number().min(0).optional(),
  })
  .transform((pricing) => ({
    inputPerMillion: pricing.input,
    outputPerMillion: pricing.output,
    cachedInputPerMillion: pricing.cached_input ?? pricing.input,
    cacheWritePerMillion: pricing.cache_write ?? pricing.input,
    reasoningPerMillion: pricing.reasoning ?? pricing.output,
  }));

/** Timeouts that override some of a provider's for one deployment. */
const timeoutOverridesSchema = z
  .strictObject({
    connect: timerDuration.optional(),
    first_byte: timerDuration.optional(),
    idle: timerDuration.optional(),
  })
  .transform((timeouts) => ({
    connectMs: timeouts.connect,
    firstByteMs: timeouts.first_byte,
    idleMs: timeouts.idle,
  }));

const retryFields = {
  /** Further attempts after the first one, on the same model (another deployment when it has several). */
  attempts: z.number().int().min(0).max(10),
  initial_backoff: timerDuration,
  max_backoff: timerDuration,
  /** An upstream asking to wait longer than this is not waited for: the gateway fails over instead. */
  max_retry_after: timerDuration,
};

const retrySchema = z.strictObject({
  attempts: retryFields.attempts.default(2),
  initial_backoff: retryFields.initial_backoff.default(250),
  max_backoff: retryFields.max_backoff.default(4000),
  max_retry_after: retryFields.max_retry_after.default(5000),
});

const retryOverridesSchema = z.strictObject({
  attempts: retryFields.attempts.optional(),
  initial_backoff: retryFields.initial_backoff.optional(),
  max_backoff: retryFields.max_backoff.optional(),
  max_retry_after: retryFields.max_retry_after.optional(),
});

/**
 * When a deployment is taken out of rotation (see routing/deployment-health.ts). Ejection needs evidence from the
 * traffic as a whole, so that one account's requests that fail on their own cannot take a model away from the others.
 */
const circuitBreakerSchema = z
  .strictObject({
    /** false: deployments are never ejected (an upstream's retry-after still pauses one). */
    enabled: z.boolean().default(true),
    /** Consecutive failed requests that cannot be the requests' own (connection refused, credentials rejected). */
    failure_threshold: z.number().int().min(1).max(1000).default(5),
    /** Failure percentage over the window, each account weighing the same, at or above which a deployment is ejected. */
    failure_percentage: z.number().min(1).max(100).default(80),
    /** Requests a deployment must have had in the window before its failure percentage is judged. */
    minimum_requests: z.number().int().min(1).max(1_000_000).default(10),
    /** Accounts whose requests failed in the window; 1 suits a single-tenant gateway. */
    minimum_accounts: z.number().int().min(1).max(1000).default(2),
    window: duration.default(60_000),
    /** How long an ejected deployment stays out before one probe request is let through; doubles while probes fail. */
    cooldown: duration.default(30_000),
    max_cooldown: duration.default(300_000),
    /** Below this percentage of healthy deployments in a model's chain, ejected ones serve again; 0 refuses instead. */
    panic_threshold: z.number().min(0).max(100).default(50),
    /** How often outcomes and ejections are exchanged: with the other nodes through Redis, or the primary of --workers. */
    sync_interval: timerDuration.default(1000),
  })
  .superRefine((breaker, context) => {
    if (breaker.max_cooldown < breaker.cooldown) {
      context.addIssue({ code: 'custom', path: ['max_cooldown'], message: 'must not be shorter than cooldown' });
    }
    if (breaker.window < 1000) {
      context.addIssue({ code: 'custom', path: ['window'], message: 'must be at least 1s' });
    }
    if (breaker.sync_interval < 50) {
      context.addIssue({ code: 'custom', path: ['sync_interval'], message: 'must be at least 50ms' });
    }
  })
  .transform((breaker) => ({
    enabled: breaker.enabled,
    failureThreshold: breaker.failure_threshold,
    failurePercentage: breaker.failure_percentage,
    minimumRequests: breaker.minimum_requests,
    minimumAccounts: breaker.minimum_accounts,
    windowMs: breaker.window,
    cooldownMs: breaker.cooldown,
    maxCooldownMs: breaker.max_cooldown,
    panicThreshold: breaker.panic_threshold,
    syncIntervalMs: breaker.sync_interval,
  }));

export const routingSchema = z
  .strictObject({
    retry: retrySchema.default(retrySchema.parse({})),
    circuit_breaker: circuitBreakerSchema.default(circuitBreakerSchema.parse({})),
  })
  .transform((routing) => ({
    retry: {
      attempts: routing.retry.attempts,
      initialBackoffMs: routing.retry.initial_backoff,
      maxBackoffMs: routing.retry.max_backoff,
      maxRetryAfterMs: routing.retry.max_retry_after,
    },
    circuitBreaker: routing.circuit_breaker,
  }));

const deploymentSchema = z.strictObject({
  provider: z.string().min(1),
  upstream_model: z.string().min(1).optional(),
  /** Share of traffic relative to the model's other deployments; 0 = standby, used only when the others cannot serve. */
  weight: z.number().min(0).max(1_000_000).default(1),
  timeouts: timeoutOverridesSchema.optional(),
  /** This deployment's prices, when they differ from the model's. */
  pricing: pricingSchema.optional(),
});

const parametersSchema = z
  .strictObject({
    /** Request parameters this model cannot honour, on top of those its provider cannot translate. */
    unsupported: z.array(z.string().min(1)).default([]),
    /** drop: remove sampling-only parameters (and refuse those whose absence changes the answer's shape); refuse: 400. */
    on_unsupported: z.enum(['drop', 'refuse']).default('drop'),
    /**
     * How the upstream model is asked to think: Claude's `budget` (enabled, budget_tokens) or `adaptive` (effort), or
     * `none` (it cannot). Absent: decided by the provider from the upstream model's name.
     */
    thinking: z.enum(['budget', 'adaptive', 'none']).optional(),
  })
  .transform((parameters) => ({
    unsupported: parameters.unsupported,
    onUnsupported: parameters.on_unsupported,
    ...(parameters.thinking === undefined ? {} : { thinking: parameters.thinking }),
  }));

/**
 * What a model is for: `chat` (chat completions, legacy completions, responses, messages) and `embeddings`. An
 * endpoint refuses a model configured without its capability, and dispatch skips such fallbacks.
 */
const modelCapability = z.enum(['chat', 'embeddings']);
export type ModelCapability = z.output<typeof modelCapability>;

/** Provider types whose upstream has an embeddings API (Anthropic's has none). */
export const embeddingProviderTypes: ReadonlySet<string> = new Set(['openai', 'gemini', 'local']);

export const modelSchema = z
  .strictObject({
    name,
    /** `[chat]`, `[embeddings]`, or both. */
    capabilities: z
      .array(modelCapability)
      .min(1)
      .refine((list) => new Set(list).size === list.length, 'lists a capability twice')
      .default(['chat']),
    /** Short form for a single deployment: `provider` (+ `upstream_model`). */
    provider: z.string().min(1).optional(),
    upstream_model: z.string().min(1).optional(),
    deployments: z.array(deploymentSchema).min(1).optional(),
    /** Other public models tried, in order, when every deployment of this one failed. */
    fallbacks: z.array(z.string().min(1)).default([]),
    retry: retryOverridesSchema.optional(),
    owned_by: z.string().min(1).optional(),
    context_window: z.number().int().min(1).optional(),
    /** The model's output limit; also the max_tokens sent to providers that require one when the client gave none. */
    max_output_tokens: z.number().int().min(1).optional(),
    /** false: the gateway asks for a complete answer and streams it to the client itself. */
    streaming: z.boolean().default(true),
    parameters: parametersSchema.default(parametersSchema.parse({})),
    pricing: pricingSchema.optional(),
    /** Overrides its providers' `responses_api` for this model (only OpenAI-compatible providers can be native). */
    responses_api: responsesApiMode.optional(),
  })
  .superRefine((model, context) => {
    if (model.deployments && (model.provider !== undefined || model.upstream_model !== undefined)) {
      context.addIssue({
        code: 'custom',
        path: ['deployments'],
        message: 'use either provider/upstream_model (one deployment) or deployments, not both',
      });
    }
    if (!model.deployments && model.provider === undefined) {
      context.addIssue({ code: 'custom', path: ['provider'], message: 'is required (or list deployments)' });
    }
  })
  .transform((model) => {
    const deployments = (
      model.deployments ?? [{ provider: model.provider ?? '', upstream_model: model.upstream_model, weight: 1 }]
    ).map((deployment) => {
      const upstreamModel = deployment.upstream_model ?? model.name;
      return {
        /** Identifies the deployment in logs, metrics and health state. */
        id: `${deployment.provider}/${upstreamModel}`,
        provider: deployment.provider,
        upstreamModel,
        weight: deployment.weight,
        timeouts: 'timeouts' in deployment ? deployment.timeouts : undefined,
        pricing: ('pricing' in deployment ? deployment.pricing : undefined) ?? model.pricing,
      };
    });
    const primary = deployments[0] as (typeof deployments)[number];
    return {
      name: model.name,
      capabilities: model.capabilities as readonly ModelCapability[],
      /** The first deployment's provider and upstream model (what a single-deployment model is served by). */
      provider: primary.provider,
      upstreamModel: primary.upstreamModel,
      deployments,
      fallbacks: model.fallbacks,
      retryOverrides: model.retry,
      shortForm: model.deployments === undefined,
      ownedBy: model.owned_by ?? primary.provider,
      contextWindow: model.context_window,
      maxOutputTokens: model.max_output_tokens,
      streaming: model.streaming,
      parameters: model.parameters,
      pricing: model.pricing,
      // Optional in the type too, so configurations built in code need not spell it out.
      ...(model.responses_api === undefined ? {} : { responsesApi: model.responses_api }),
    };
  });
