import type { ApiError } from '../errors/api-error.js';
import type { DeploymentHealth } from './deployment-health.js';
import { backoffMs, type FailureKind, retryAfterMs } from './retry-policy.js';
import type { Deployment, Route, RouteChain } from './router.js';
import { pickWeighted } from './select-deployment.js';

/**
 * Which deployment of one route to try next: a healthy one not tried yet, picked by weight; when every healthy one has
 * been tried, the same ones again after a backoff, but only after a transient failure and while the model's retries
 * last. The dispatcher reports each attempt back (`tried`, `failed`).
 */

export interface NextAttempt {
  deployment: Deployment;
  /** How long to wait first (a retry's backoff, or the upstream's retry-after). */
  waitMs: number;
}

export class RouteCursor {
  /** Deployment ids tried so far; allocated at the first attempt. */
  private triedIds: string[] | undefined;
  private retriesLeft: number;
  private previous: { error: ApiError; kind: FailureKind } | undefined;
  /** The soonest any deployment of the route comes back into rotation (for a retry-after when none is healthy). */
  soonestAvailableMs = Number.POSITIVE_INFINITY;

  constructor(
    private readonly route: Route,
    /** The whole chain the route belongs to: health lets ejected deployments serve when too few are healthy. */
    private readonly chain: RouteChain,
    private readonly health: DeploymentHealth,
    private readonly random: () => number,
  ) {
    this.retriesLeft = route.model.retry.attempts;
  }

  /** Whether every deployment of the route is paused by upstream rate limits (429 rather than 503). */
  get rateLimited(): boolean {
    return this.route.deployments.every((deployment) => this.health.isPaused(deployment.id));
  }

  /**
   * The next deployment to try; undefined when the route has nothing more to offer, `unavailable` when none of its
   * deployments was in rotation to begin with.
   */
  next(): NextAttempt | 'unavailable' | undefined {
    const healthy = this.healthy();
    const tried = this.triedIds;
    if (healthy.length === 0 && tried === undefined) return 'unavailable';
    const fresh = tried === undefined ? healthy : healthy.filter((deployment) => !tried.includes(deployment.id));
    if (fresh.length > 0) {
      const deployment = pickWeighted(fresh, this.random);
      return deployment && { deployment, waitMs: 0 };
    }
    // Nothing untried: only a transient failure earns a retry, on a deployment that can take it.
    const previous = this.previous;
    if (previous?.kind !== 'retry' || this.retriesLeft === 0 || healthy.length === 0) return undefined;
    this.retriesLeft--;
    const retryNumber = this.route.model.retry.attempts - this.retriesLeft;
    const waitMs = retryAfterMs(previous.error) ?? backoffMs(retryNumber, this.route.model.retry, this.random);
    const deployment = pickWeighted(healthy, this.random);
    return deployment && { deployment, waitMs };
  }

  tried(deployment: Deployment): void {
    if (this.triedIds) this.triedIds.push(deployment.id);
    else this.triedIds = [deployment.id];
  }

  /** A failed attempt, classified, decides whether a retry may follow (see next). */
  failed(error: ApiError, kind: FailureKind): void {
    this.previous = { error, kind };
  }

  /** The deployments in rotation now; the route's own array when all are (the usual case, no allocation). */
  private healthy(): readonly Deployment[] {
    const deployments = this.route.deployments;
    let healthy: readonly Deployment[] = deployments;
    for (const deployment of deployments) {
      const availableInMs = this.health.availableInMs(deployment.id, this.chain);
      if (availableInMs < this.soonestAvailableMs) this.soonestAvailableMs = availableInMs;
      if (availableInMs > 0 && healthy === deployments) {
        healthy = deployments.filter((item) => this.health.isAvailable(item.id, this.chain));
      }
    }
    return healthy;
  }
}
