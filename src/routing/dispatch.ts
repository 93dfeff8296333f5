import type { ModelPricing } from '../config/schema.js';
import type { Metrics } from '../observability/metrics.js';
import { synthesizeChunks } from '../openai/synthesize-stream.js';
import type { ChatCompletionRequest } from '../openai/types.js';
import type { CompletionResult, ProviderCall, StreamItem } from '../providers/provider.js';
import type { CancelSignal } from '../server/cancellation.js';
import { ApiError, toApiError } from '../server/errors.js';
import { contextWindowError } from './context-window.js';
import type { DeploymentHealth } from './deployment-health.js';
import { applyParameterSupport } from './parameters.js';
import { primeStream } from './prime-stream.js';
import { backoffMs, classifyFailure, countsAgainstDeployment, type FailureKind, retryAfterMs } from './retry-policy.js';
import type { Deployment, Route, Router } from './router.js';
import { pickWeighted } from './select-deployment.js';

/**
 * Dispatch: serves one request from the route chain of its model (the model, then its fallbacks). Per model, a
 * deployment is picked by weight among the healthy ones; a failed attempt moves to an untried deployment, or, for
 * transient failures when none is left, retries after a backoff that honours the upstream's retry-after (a longer
 * wait than the model's `max_retry_after` is not waited for: that deployment is paused and the next one tried).
 * When a model has nothing left, the next fallback takes over. Every attempt is recorded in the trace, which becomes
 * part of the request-log row. Streams fail over until their first content chunk; after that a failure is in-band.
 */

export interface AttemptRecord {
  /** The public model this attempt served (the requested one or a fallback). */
  model: string;
  /** Deployment id (`provider/upstream_model`). */
  deployment: string;
  provider: string;
  upstreamModel: string;
  outcome: 'success' | 'error' | 'skipped';
  /** The HTTP status the error would have had for the client (success: 200). */
  status: number;
  code: string | null;
  /** How long the gateway waited (backoff / retry-after) before this attempt. */
  waitedMs: number;
  latencyMs: number;
}

export interface ServedBy {
  model: string;
  deployment: string;
  provider: string;
  upstreamModel: string;
  pricing: ModelPricing | undefined;
}

/** What dispatch learned about one request; filled in as it goes, so it is complete even when dispatch throws. */
export interface DispatchTrace {
  attempts: AttemptRecord[];
  served?: ServedBy;
  /** Parameters removed because the serving model does not support them (header x-switchboard-dropped-parameters). */
  droppedParameters: readonly string[];
}

const noParameters: readonly string[] = Object.freeze([]);

export function newTrace(): DispatchTrace {
  return { attempts: [], droppedParameters: noParameters };
}

/** The last attempt that reached a deployment (skipped routes have none). */
export function lastDeploymentAttempt(trace: DispatchTrace): AttemptRecord | undefined {
  for (let index = trace.attempts.length - 1; index >= 0; index--) {
    const attempt = trace.attempts[index] as AttemptRecord;
    if (attempt.deployment !== '') return attempt;
  }
  return undefined;
}

/** Attempts that reached a deployment or were refused by its adapter (skipped routes are not attempts). */
export function attemptCount(trace: DispatchTrace): number {
  let count = 0;
  for (const attempt of trace.attempts) if (attempt.outcome !== 'skipped') count++;
  return count;
}

export interface DispatcherOptions {
  router: Router;
  health: DeploymentHealth;
  metrics?: Metrics;
  random?: () => number;
  /** Waits (abortable); injectable so tests need not sleep. */
  sleep?: (milliseconds: number, signal: CancelSignal) => Promise<void>;
}

function cancelled(): ApiError {
  return new ApiError({
    status: 499,
    type: 'invalid_request_error',
    code: 'client_closed_request',
    message: 'The request was cancelled.',
  });
}

function abortableSleep(milliseconds: number, signal: CancelSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(cancelled());
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, milliseconds);
    const onAbort = () => {
      clearTimeout(timer);
      reject(cancelled());
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Every deployment is out of rotation: 429 when upstreams asked for a pause (rate limits), 503 when failing. */
function noHealthyDeployment(model: string, retryInMs: number, rateLimited: boolean): ApiError {
  const seconds = Math.max(1, Math.ceil(retryInMs / 1000));
  const headers = { 'retry-after': String(seconds), 'retry-after-ms': String(seconds * 1000) };
  if (rateLimited) {
    return new ApiError({
      status: 429,
      type: 'rate_limit_error',
      code: 'rate_limit_exceeded',
      message: `The upstream providers serving \`${model}\` are rate-limiting the gateway; retry in ${seconds}s.`,
      headers,
    });
  }
  return new ApiError({
    status: 503,
    type: 'server_error',
    code: 'no_healthy_deployment',
    message: `Every deployment that serves \`${model}\` is failing or cooling down; retry in ${seconds}s.`,
    headers,
  });
}

type Attempt<Result> = (deployment: Deployment, call: ProviderCall) => Promise<Result>;

export class Dispatcher {
  private readonly random: () => number;
  private readonly sleep: (milliseconds: number, signal: CancelSignal) => Promise<void>;

  constructor(private readonly options: DispatcherOptions) {
    this.random = options.random ?? Math.random;
    this.sleep = options.sleep ?? abortableSleep;
  }

  /** A non-streaming completion from the first deployment in the chain that can give one. */
  complete(
    request: ChatCompletionRequest,
    signal: CancelSignal,
    trace: DispatchTrace,
    accountId?: string,
    body?: Buffer,
  ): Promise<CompletionResult> {
    return this.run(request, signal, trace, accountId, body, (deployment, call) => deployment.provider.complete(call));
  }

  /**
   * A stream that has produced its first content chunk (or ended) without failing. A model configured with
   * `streaming: false` is asked for a complete answer, streamed to the client by the gateway.
   */
  async stream(
    request: ChatCompletionRequest,
    signal: CancelSignal,
    trace: DispatchTrace,
    accountId?: string,
    body?: Buffer,
  ): Promise<AsyncIterable<StreamItem>> {
    // After the first content chunk a failure is reported in-band by the caller; it is recorded here.
    const onFailure = (error: unknown) => this.streamFailed(error, trace, accountId);
    return this.run(request, signal, trace, accountId, body, async (deployment, call) => {
      if (!deployment.model.streaming) {
        const { stream: _stream, stream_options: _options, ...whole } = call.request;
        const { body: _body, ...rest } = call;
        const { completion } = await deployment.provider.complete({ ...rest, request: whole as ChatCompletionRequest });
        return primeStream(
          synthesizeChunks(completion).map((chunk): StreamItem => ({ chunk })),
          onFailure,
        );
      }
      return primeStream(await deployment.provider.stream(call), onFailure);
    });
  }

  /** A stream failed after its first content chunk: the attempt that served it, and its deployment's health. */
  private streamFailed(error: unknown, trace: DispatchTrace, accountId: string | undefined): void {
    const apiError = toApiError(error);
    const served = trace.served;
    const attempt = trace.attempts.at(-1);
    if (attempt && attempt.outcome === 'success') {
      attempt.outcome = 'error';
      attempt.status = apiError.status;
      attempt.code = apiError.code;
    }
    if (served && apiError.status !== 499 && countsAgainstDeployment(classifyFailure(apiError))) {
      this.options.health.failed(served.deployment, { account: accountId, request: trace, error: apiError });
    }
  }

  private async run<Result>(
    request: ChatCompletionRequest,
    signal: CancelSignal,
    trace: DispatchTrace,
    /** Passed to providers that keep per-account state (the local model's prompt cache). */
    accountId: string | undefined,
    /** The client's body as received, when it may be forwarded (ProviderCall.body). */
    body: Buffer | undefined,
    attempt: Attempt<Result>,
  ): Promise<Result> {
    const { health } = this.options;
    const chain = this.options.router.chain(request.model);
    let lastError: ApiError | undefined;
    let refusal: ApiError | undefined;
    let soonestAvailableMs = Number.POSITIVE_INFINITY;
    let unavailable: ApiError | undefined;

    for (const route of chain) {
      const contextError = contextWindowError(request, route.model);
      if (contextError) {
        this.skip(trace, route, contextError);
        refusal ??= contextError;
        continue;
      }
      // Deployment ids already tried for this model; allocated at the second attempt (most requests make one).
      let tried: string[] | undefined;
      let retriesLeft = route.model.retry.attempts;
      let previous: { error: ApiError; kind: FailureKind } | undefined;
      const deployments = route.deployments;

      for (;;) {
        if (signal.aborted) throw cancelled();
        let healthy: readonly Deployment[] = deployments;
        for (const deployment of deployments) {
          const availableInMs = health.availableInMs(deployment.id, chain);
          if (availableInMs < soonestAvailableMs) soonestAvailableMs = availableInMs;
          // Only when some deployment is out of rotation does the healthy set need an array of its own.
          if (availableInMs > 0 && healthy === deployments) {
            healthy = deployments.filter((item) => health.isAvailable(item.id, chain));
          }
        }
        if (healthy.length === 0 && tried === undefined) {
          const rateLimited = deployments.every((deployment) => health.isPaused(deployment.id));
          unavailable ??= noHealthyDeployment(request.model, soonestAvailableMs, rateLimited);
          this.skip(trace, route, unavailable);
          break;
        }
        const triedSoFar = tried;
        const fresh =
          triedSoFar === undefined ? healthy : healthy.filter((deployment) => !triedSoFar.includes(deployment.id));
        let candidates = fresh;
        let waitMs = 0;
        if (fresh.length === 0) {
          // Nothing untried: only a transient failure earns a retry, on a deployment that can take it.
          if (previous?.kind !== 'retry' || retriesLeft === 0) break;
          candidates = healthy;
          if (candidates.length === 0) break;
          retriesLeft--;
          const retryNumber = route.model.retry.attempts - retriesLeft;
          const requested = retryAfterMs(previous.error);
          waitMs = requested ?? backoffMs(retryNumber, route.model.retry, this.random);
        }
        const deployment = pickWeighted(candidates, this.random);
        if (!deployment) break;
        if (waitMs > 0) await this.sleep(waitMs, signal);
        tried ??= [];
        if (!health.tryAcquire(deployment.id, chain)) {
          // Another request took the half-open probe while this one waited.
          tried.push(deployment.id);
          continue;
        }
        tried.push(deployment.id);

        let prepared: ReturnType<typeof applyParameterSupport>;
        try {
          prepared = applyParameterSupport(request, deployment.model, deployment.provider);
        } catch (error) {
          // This deployment's provider cannot take the request; another deployment or a fallback may.
          const apiError = toApiError(error);
          this.record(trace, route, deployment, 'skipped', apiError, 0, 0);
          refusal ??= apiError;
          continue;
        }

        const started = performance.now();
        try {
          const result = await attempt(deployment, {
            request: prepared.request,
            model: deployment.model,
            timeouts: deployment.timeouts,
            signal,
            accountId,
            // Removing a parameter changed the request: its original bytes no longer say the same thing.
            body: prepared.request === request ? body : undefined,
          });
          health.succeeded(deployment.id, { account: accountId, request: trace });
          this.record(trace, route, deployment, 'success', undefined, waitMs, performance.now() - started);
          trace.served = {
            model: route.model.name,
            deployment: deployment.id,
            provider: deployment.provider.name,
            upstreamModel: deployment.model.upstreamModel,
            pricing: deployment.pricing,
          };
          trace.droppedParameters = prepared.dropped;
          return result;
        } catch (error) {
          const apiError = toApiError(error);
          this.record(trace, route, deployment, 'error', apiError, waitMs, performance.now() - started);
          if (signal.aborted) {
            health.released(deployment.id);
            throw apiError.status === 499 ? apiError : cancelled();
          }
          const kind = classifyFailure(apiError);
          const requested = retryAfterMs(apiError);
          const tooLong = requested !== undefined && requested > route.model.retry.maxRetryAfterMs;
          // A deployment that answers "your request is wrong" is up: only upstream trouble counts against it.
          if (countsAgainstDeployment(kind)) {
            const pauseMs = tooLong ? requested : undefined;
            health.failed(deployment.id, { account: accountId, request: trace, error: apiError, pauseMs });
          } else health.succeeded(deployment.id, { account: accountId, request: trace });
          if (kind === 'fatal') throw apiError;
          lastError = apiError;
          // A wait longer than the model accepts is not waited for: other deployments and fallbacks go first.
          // A busy in-process provider is not retried in place (its queue is the bound), only its alternatives.
          previous = { error: apiError, kind: tooLong || kind === 'busy' ? 'next-deployment' : kind };
          if (kind === 'next-model') break;
        }
      }
    }
    if (lastError) throw lastError;
    if (refusal) throw refusal;
    throw unavailable ?? noHealthyDeployment(request.model, 1000, false);
  }

  private skip(trace: DispatchTrace, route: Route, error: ApiError): void {
    trace.attempts.push({
      model: route.model.name,
      deployment: '',
      provider: '',
      upstreamModel: '',
      outcome: 'skipped',
      status: error.status,
      code: error.code,
      waitedMs: 0,
      latencyMs: 0,
    });
  }

  private record(
    trace: DispatchTrace,
    route: Route,
    deployment: Deployment,
    outcome: AttemptRecord['outcome'],
    error: ApiError | undefined,
    waitedMs: number,
    latencyMs: number,
  ): void {
    trace.attempts.push({
      model: route.model.name,
      deployment: deployment.id,
      provider: deployment.provider.name,
      upstreamModel: deployment.model.upstreamModel,
      outcome,
      status: error?.status ?? 200,
      code: error?.code ?? null,
      waitedMs: Math.round(waitedMs),
      latencyMs: Math.round(latencyMs),
    });
    this.options.metrics?.upstreamAttempts.inc(1, deployment.id, outcome);
  }
}
