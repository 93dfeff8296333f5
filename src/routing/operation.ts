import type { ModelCapability } from '../config/schema.js';
import type { ApiError } from '../errors/api-error.js';
import type { DeploymentCall } from '../providers/provider.js';
import type { CancelSignal } from '../server/cancellation.js';
import type { Deployment, Route } from './router.js';

/**
 * What an endpoint asks dispatch to do for one request, whatever its kind (a chat completion, a stream, embeddings,
 * a request forwarded as it came): dispatch picks the deployments, retries and fails over; the operation knows how to
 * call one deployment.
 */
export interface DispatchOperation<Result> {
  /** The public model requested; its route chain (the model, then its fallbacks) is walked in order. */
  readonly model: string;
  /** The kind of model the request needs; routes whose model lacks it are skipped (fallbacks). Absent: `chat`. */
  readonly capability?: ModelCapability;
  /** Why a route's model cannot take this request at all (e.g. its context window): the next fallback is tried. */
  refuseRoute?(route: Route): ApiError | undefined;
  /**
   * The call to one deployment. Throws an ApiError when the deployment's provider cannot take this request (a
   * parameter it must refuse): the deployment is skipped, another or a fallback may serve.
   */
  prepare(deployment: Deployment, context: AttemptContext): PreparedCall<Result>;
}

export interface AttemptContext {
  signal: CancelSignal;
  /** The calling account: state a provider keeps between requests (a local model's prompt cache) stays within it. */
  accountId: string | undefined;
}

export interface PreparedCall<Result> {
  /** Parameters left out for this deployment (announced in x-switchboard-dropped-parameters). */
  dropped: readonly string[];
  send(): Promise<Result>;
}

/** What every provider call takes from its deployment and its attempt: the model served, timeouts, cancellation. */
export function deploymentCall(deployment: Deployment, context: AttemptContext): DeploymentCall {
  return {
    model: deployment.model,
    timeouts: deployment.timeouts,
    signal: context.signal,
    ...(context.accountId === undefined ? {} : { accountId: context.accountId }),
  };
}
