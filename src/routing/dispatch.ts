import { ApiError, apiError, requestCancelled, toApiError } from '../errors/api-error.js';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import type { ChatCompletionRequest } from '../openai/types.js';
import type { CompletionResult, StreamItem } from '../providers/provider.js';
import type { CancelSignal } from '../server/cancellation.js';
import { chatCompletionOperation, chatStreamOperation } from './chat-operations.js';
import type { DeploymentHealth } from './deployment-health.js';
import { capabilityRefusal } from './model-capability.js';
import type { DispatchOperation, PreparedCall } from './operation.js';
import { classifyFailure, countsAgainstDeployment, type FailureKind, retryAfterMs } from './retry-policy.js';
import { RouteCursor } from './route-cursor.js';
import type { Deployment, Route, RouteChain, Router } from './router.js';
import type { AttemptRecord, DispatchTrace } from './trace.js';

/**
 * Dispatch: serves one request from the route chain of its model (the model, then its fallbacks). Per model a
 * deployment is picked by weight among the healthy ones (route-cursor.ts); a failed attempt moves to an untried
 * deployment or, for transient failures when none is left, retries after a backoff that honours the upstream's
 * retry-after (a longer wait than the model's `max_retry_after` is not waited for: that deployment is paused and the
 * next one tried). When a model has nothing left, the next fallback takes over. Every attempt is recorded in the
 * trace, which becomes part of the request-log row. Streams fail over until their first content chunk.
 */

export interface DispatcherOptions {
  router: Router;
  health: DeploymentHealth;
  metrics?: Metrics;
  /** Where a provider's crash (anything but an ApiError) is logged in full before it is answered as a 500. */
  logger?: Logger;
  random?: () => number;
  /** Waits (abortable); injectable so tests need not sleep. */
  sleep?: (milliseconds: number, signal: CancelSignal) => Promise<void>;
}

function abortableSleep(milliseconds: number, signal: CancelSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(requestCancelled());
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, milliseconds);
    const onAbort = () => {
      clearTimeout(timer);
      reject(requestCancelled());
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Every deployment is out of rotation: 429 when upstreams asked for a pause (rate limits), 503 when failing. */
function noHealthyDeployment(model: string, retryInMs: number, rateLimited: boolean): ApiError {
  const seconds = Math.max(1, Math.ceil(retryInMs / 1000));
  const headers = { 'retry-after': String(seconds), 'retry-after-ms': String(seconds * 1000) };
  if (rateLimited) {
    return apiError(
      'rate_limit_exceeded',
      `The upstream providers serving \`${model}\` are rate-limiting the gateway; retry in ${seconds}s.`,
      { headers },
    );
  }
  return apiError(
    'no_healthy_deployment',
    `Every deployment that serves \`${model}\` is failing or cooling down; retry in ${seconds}s.`,
    { headers },
  );
}

/** What the chain's failures add up to, reported when nothing served: the last failure, else a refusal, else 503. */
class ChainFailures {
  lastError: ApiError | undefined;
  refusal: ApiError | undefined;
  unavailable: ApiError | undefined;

  final(model: string): ApiError {
    return this.lastError ?? this.refusal ?? this.unavailable ?? noHealthyDeployment(model, 1000, false);
  }
}

/** The result of one route: served (with the result), or passed on to the next route. */
type RouteResult<Result> = { served: true; result: Result } | { served: false };
const passedOn: RouteResult<never> = Object.freeze({ served: false });

export class Dispatcher {
  private readonly random: () => number;
  private readonly sleep: (milliseconds: number, signal: CancelSignal) => Promise<void>;

  constructor(private readonly options: DispatcherOptions) {
    this.random = options.random ?? Math.random;
    this.sleep = options.sleep ?? abortableSleep;
  }

  /** A non-streaming chat completion from the first deployment in the chain that can give one. */
  complete(
    request: ChatCompletionRequest,
    signal: CancelSignal,
    trace: DispatchTrace,
    accountId?: string,
    body?: Buffer,
  ): Promise<CompletionResult> {
    return this.run(chatCompletionOperation(request, body), signal, trace, accountId);
  }

  /** A chat stream that has produced its first content chunk (or ended) without failing. */
  stream(
    request: ChatCompletionRequest,
    signal: CancelSignal,
    trace: DispatchTrace,
    accountId?: string,
    body?: Buffer,
  ): Promise<AsyncIterable<StreamItem>> {
    const onFailure = (error: unknown) => this.streamFailed(error, trace, accountId);
    return this.run(chatStreamOperation(request, body, onFailure), signal, trace, accountId);
  }

  /**
   * What a primed stream of another kind than chat's calls when it fails after its first content: the serving
   * attempt and its deployment's health learn of it, as they do for chat streams.
   */
  streamFailureReporter(trace: DispatchTrace, accountId?: string): (error: unknown) => void {
    return (error) => this.streamFailed(error, trace, accountId);
  }

  /** Serves an operation from its model's route chain; throws what the chain's failures add up to. */
  async run<Result>(
    operation: DispatchOperation<Result>,
    signal: CancelSignal,
    trace: DispatchTrace,
    accountId?: string,
  ): Promise<Result> {
    const failures = new ChainFailures();
    const chain = this.options.router.chain(operation.model);
    for (const route of chain) {
      const refusal = capabilityRefusal(route.model, operation.capability ?? 'chat') ?? operation.refuseRoute?.(route);
      if (refusal) {
        this.recordSkippedRoute(trace, route, refusal);
        failures.refusal ??= refusal;
        continue;
      }
      const outcome = await this.runRoute(route, chain, operation, signal, trace, accountId, failures);
      if (outcome.served) return outcome.result;
    }
    throw failures.final(operation.model);
  }

  /** A stream failed after its first content chunk: the attempt that served it, and its deployment's health. */
  private streamFailed(error: unknown, trace: DispatchTrace, accountId: string | undefined): void {
    this.logUnexpected(error);
    const apiError = toApiError(error);
    const attempt = trace.attempts.at(-1);
    if (attempt && attempt.outcome === 'success') {
      attempt.outcome = 'error';
      attempt.status = apiError.status;
      attempt.code = apiError.code;
    }
    const served = trace.served;
    if (served && apiError.status !== 499 && countsAgainstDeployment(classifyFailure(apiError))) {
      this.options.health.failed(served.deployment, { account: accountId, request: trace, error: apiError });
    }
  }

  /** A provider that throws anything but an ApiError has a bug: the 500 it becomes says nothing, the log says what. */
  private logUnexpected(error: unknown): void {
    if (!(error instanceof ApiError)) this.options.logger?.error({ err: error }, 'unexpected error from a provider');
  }

  /** Tries the deployments of one route until one serves, the route has nothing left, or a failure ends dispatch. */
  private async runRoute<Result>(
    route: Route,
    chain: RouteChain,
    operation: DispatchOperation<Result>,
    signal: CancelSignal,
    trace: DispatchTrace,
    accountId: string | undefined,
    failures: ChainFailures,
  ): Promise<RouteResult<Result>> {
    const { health } = this.options;
    const cursor = new RouteCursor(route, chain, health, this.random);
    for (;;) {
      if (signal.aborted) throw requestCancelled();
      const next = cursor.next();
      if (next === 'unavailable') {
        failures.unavailable ??= noHealthyDeployment(operation.model, cursor.soonestAvailableMs, cursor.rateLimited);
        this.recordSkippedRoute(trace, route, failures.unavailable);
        return passedOn;
      }
      if (next === undefined) return passedOn;
      const { deployment, waitMs } = next;
      if (waitMs > 0) await this.sleep(waitMs, signal);
      cursor.tried(deployment);
      // Another request took the half-open probe while this one waited.
      if (!health.tryAcquire(deployment.id, chain)) continue;

      let call: PreparedCall<Result>;
      try {
        call = operation.prepare(deployment, { signal, accountId });
      } catch (error) {
        // This deployment's provider cannot take the request; another deployment or a fallback may.
        const refusal = toApiError(error);
        this.record(trace, route, deployment, 'skipped', refusal, 0, 0);
        failures.refusal ??= refusal;
        continue;
      }

      const startedAt = performance.now();
      try {
        const result = await call.send();
        // The trace stands for the request: its retries count once.
        health.succeeded(deployment.id, { account: accountId, request: trace });
        this.record(trace, route, deployment, 'success', undefined, waitMs, performance.now() - startedAt);
        trace.served = {
          model: route.model.name,
          deployment: deployment.id,
          provider: deployment.provider.name,
          upstreamModel: deployment.model.upstreamModel,
          pricing: deployment.pricing,
        };
        trace.droppedParameters = call.dropped;
        return { served: true, result };
      } catch (error) {
        this.logUnexpected(error);
        const failure = toApiError(error);
        this.record(trace, route, deployment, 'error', failure, waitMs, performance.now() - startedAt);
        if (signal.aborted) {
          health.released(deployment.id);
          throw failure.status === 499 ? failure : requestCancelled();
        }
        const kind = this.judgeFailure(route, deployment, failure, accountId, trace);
        if (kind === 'fatal') throw failure;
        failures.lastError = failure;
        cursor.failed(failure, kind);
        if (kind === 'next-model') return passedOn;
      }
    }
  }

  /**
   * What a failed attempt means for the deployment's health and for what is tried next. A wait longer than the model
   * accepts is not waited for (other deployments and fallbacks go first); a busy in-process provider is not retried in
   * place (its queue is the bound), only its alternatives.
   */
  private judgeFailure(
    route: Route,
    deployment: Deployment,
    failure: ApiError,
    accountId: string | undefined,
    trace: DispatchTrace,
  ): FailureKind {
    const kind = classifyFailure(failure);
    const requested = retryAfterMs(failure);
    const tooLong = requested !== undefined && requested > route.model.retry.maxRetryAfterMs;
    const context = { account: accountId, request: trace };
    // A deployment that answers "your request is wrong" is up: only upstream trouble counts against it.
    if (countsAgainstDeployment(kind)) {
      this.options.health.failed(deployment.id, {
        ...context,
        error: failure,
        pauseMs: tooLong ? requested : undefined,
      });
    } else {
      this.options.health.succeeded(deployment.id, context);
    }
    if (kind === 'fatal' || kind === 'next-model') return kind;
    return tooLong || kind === 'busy' ? 'next-deployment' : kind;
  }

  private recordSkippedRoute(trace: DispatchTrace, route: Route, error: ApiError): void {
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
