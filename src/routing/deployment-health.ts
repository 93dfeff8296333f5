import type { ApiError } from '../errors/api-error.js';
import { type AccountTally, OutcomeWindow } from './outcome-window.js';
import { isOutlier, mayFollowTheRequest, type OutlierSettings } from './outlier-detection.js';
import type { RouteChain } from './router.js';

/**
 * Health of each deployment: which ones are ejected (out of rotation) and which ones an upstream asked to pause.
 *
 * - Outcomes are counted per request, not per attempt (a retry of the same request on the same deployment is the
 *   same prompt failing again), and per account; `outlier-detection.ts` decides from them whether the deployment
 *   itself is failing, so one tenant's failing requests cannot eject it for everyone.
 * - An ejected deployment stays out for `cooldownMs`; then one probe request is let through (half-open): success
 *   brings it back, failure ejects it again with the cooldown doubled (up to `maxCooldownMs`). Outcomes while the
 *   cooldown runs (requests sent before the ejection, or in panic) neither end nor extend it.
 * - Panic (after Envoy's panic threshold): when fewer than `panicThreshold` percent of the deployments of a
 *   request's chain (its model and fallbacks) are healthy, ejected ones serve anyway, so the last deployment of a
 *   chain is never ejected into a refusal: each request gets the upstream's own answer.
 * - An upstream that says "retry after N seconds" pauses the deployment for that long, panic or not.
 *
 * State is kept per process and keyed by the configured deployment ids (bounded). With Redis, or between the workers
 * of `serve --workers` through the primary, `SharedHealthStore` exchanges outcomes and ejections with the others in
 * the background; this class then judges the window on the merged outcomes it is handed (`adoptShared`), and never
 * waits for the store on a request's path.
 */

export interface CircuitBreakerSettings extends OutlierSettings {
  enabled: boolean;
  windowMs: number;
  cooldownMs: number;
  maxCooldownMs: number;
  /** Percent of a chain's deployments that must be healthy for ejections to be honoured; 0: never panic. */
  panicThreshold: number;
  syncIntervalMs: number;
}

export type CircuitState = 'closed' | 'open' | 'half_open';

/** Whose request an outcome belongs to. */
export interface OutcomeContext {
  /** The account that sent the request. */
  account?: string | undefined;
  /** One object per client request (dispatch's trace): its failures count once per deployment. */
  request?: object;
}

export interface FailureReport extends OutcomeContext {
  /** The error the attempt ended with: some cannot be the request's own (see outlier-detection.ts). */
  error?: ApiError;
  /** An upstream's retry-after: no requests to the deployment before it has passed, whatever its health. */
  pauseMs?: number | undefined;
}

/** An ejection as every node sees it. */
export interface Ejection {
  /** Consecutive ejections: the cooldown doubles with each. */
  count: number;
  /** When the cooldown ends and a probe may go. */
  until: number;
}

interface LocalEjection extends Ejection {
  /** When this node let the half-open probe through; another goes if it has not reported back within a cooldown. */
  probeStartedAt: number | undefined;
}

export interface DeploymentHealthEntry {
  deployment: string;
  state: CircuitState;
  /** Milliseconds until the deployment takes requests again outside of panic (0 = now). */
  availableInMs: number;
}

/**
 * An ejection decided on this node, or a recovery from one. A recovery names the ejection it ended, so that the shared
 * store clears that one only, never a newer one another node decided meanwhile.
 */
export interface Transition {
  kind: 'ejected' | 'recovered';
  ejection: Ejection;
}

/** Whether two ejections are the same one (every node sees an ejection with the count and until it was decided with). */
export const sameEjection = (one: Ejection | undefined, other: Ejection | undefined): boolean =>
  one !== undefined && other !== undefined && one.count === other.count && one.until === other.until;

/** Receives ejections and recoveries decided on this node, to share them (SharedHealthStore). */
export type TransitionListener = (deployment: string, transition: Transition) => void;

const anonymous = '';

export class DeploymentHealth {
  private readonly ejections = new Map<string, LocalEjection>();
  private readonly pauses = new Map<string, number>();
  private readonly windows = new Map<string, OutcomeWindow>();
  /** Consecutive failures that cannot be the requests' own, per deployment. */
  private readonly runs = new Map<string, number>();
  /** Deployments each request has already failed on. */
  private readonly counted = new WeakMap<object, string[]>();
  /** Deployments with failures since the last exchange with the other nodes (judged on the merged window then). */
  private readonly toJudge = new Set<string>();
  private transitionListener: TransitionListener | undefined;
  /** Whether the window is judged on every node's outcomes (Redis reachable) rather than this node's alone. */
  private shared = false;

  constructor(
    private readonly settings: CircuitBreakerSettings,
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether a request of this chain may go to the deployment now, without claiming the half-open probe. */
  isAvailable(deployment: string, chain?: RouteChain): boolean {
    return this.availableInMs(deployment, chain) === 0;
  }

  availableInMs(deployment: string, chain?: RouteChain): number {
    if (this.ejections.size === 0 && this.pauses.size === 0) return 0;
    const now = this.now();
    const paused = this.pausedFor(deployment, now);
    const ejected = this.ejectedFor(deployment, now);
    if (ejected > 0 && chain && this.inPanic(chain, now)) return paused;
    return Math.max(paused, ejected);
  }

  /** Whether the deployment is out only because an upstream asked for a pause (a rate limit), not ejected. */
  isPaused(deployment: string): boolean {
    const now = this.now();
    return this.pausedFor(deployment, now) > 0 && this.ejectedFor(deployment, now) === 0;
  }

  /** Claims the right to send one request; outside of panic an ejected deployment admits one probe at a time. */
  tryAcquire(deployment: string, chain?: RouteChain): boolean {
    if (this.ejections.size === 0 && this.pauses.size === 0) return true;
    const now = this.now();
    if (this.pausedFor(deployment, now) > 0) return false;
    const ejection = this.ejections.get(deployment);
    if (!ejection) return true;
    if (chain && this.inPanic(chain, now)) return true;
    if (this.ejectedFor(deployment, now) > 0) return false;
    ejection.probeStartedAt = now;
    return true;
  }

  /** The deployment answered (a success, or a refusal of the request itself, which shows it is up). */
  succeeded(deployment: string, context: OutcomeContext = {}): void {
    this.pauses.delete(deployment);
    if (!this.settings.enabled) return;
    const now = this.now();
    const ejection = this.ejections.get(deployment);
    if (ejection) {
      // As with failures: while the cooldown runs, an answer is a request's sent before the ejection (or in panic),
      // and says nothing new; after it, the probe's (or a request's like it) brings the deployment back.
      if (now >= ejection.until) this.recover(deployment, ejection);
      return;
    }
    this.windowOf(deployment).add(now, context.account ?? anonymous, false);
    this.runs.delete(deployment);
  }

  /** An attempt that says nothing about the deployment (the client left): give the probe back, if it was one. */
  released(deployment: string): void {
    const ejection = this.ejections.get(deployment);
    if (ejection) ejection.probeStartedAt = undefined;
  }

  failed(deployment: string, report: FailureReport = {}): void {
    const now = this.now();
    if (report.pauseMs !== undefined && report.pauseMs > 0) {
      this.pauses.set(deployment, Math.max(this.pauses.get(deployment) ?? 0, now + report.pauseMs));
    }
    if (!this.settings.enabled) return;
    const ejection = this.ejections.get(deployment);
    if (ejection) {
      // A failure after the cooldown is the probe's (or, in panic, a request's like it): out again, for longer.
      // Failures while the cooldown runs come from requests sent before the ejection, or in panic: already judged.
      if (now >= ejection.until) this.eject(deployment, ejection.count + 1, now);
      return;
    }
    if (!this.firstFailureOfRequest(deployment, report.request)) return;
    const window = this.windowOf(deployment);
    window.add(now, report.account ?? anonymous, true);
    if (mayFollowTheRequest(report.error)) {
      if (this.shared) this.toJudge.add(deployment);
      else if (isOutlier(window.tallies(now).values(), this.settings)) this.eject(deployment, 1, now);
      return;
    }
    const run = (this.runs.get(deployment) ?? 0) + 1;
    this.runs.set(deployment, run);
    if (run >= this.settings.failureThreshold) this.eject(deployment, 1, now);
  }

  /** Every deployment ejected or paused (the others are healthy). */
  entries(): DeploymentHealthEntry[] {
    const now = this.now();
    const deployments = new Set([...this.ejections.keys(), ...this.pauses.keys()]);
    const entries: DeploymentHealthEntry[] = [];
    for (const deployment of deployments) {
      const ejection = this.ejections.get(deployment);
      const availableInMs = Math.max(this.pausedFor(deployment, now), this.ejectedFor(deployment, now));
      if (!ejection && availableInMs === 0) continue;
      const state: CircuitState = !ejection ? 'closed' : now >= ejection.until ? 'half_open' : 'open';
      entries.push({ deployment, state, availableInMs });
    }
    return entries;
  }

  // --- Sharing with other nodes (used by SharedHealthStore) ---

  /** Called with every ejection and recovery this node decides. */
  onTransition(listener: TransitionListener): void {
    this.transitionListener = listener;
  }

  /** Whether the window is judged on the merged outcomes of every node (true while Redis answers). */
  setShared(shared: boolean): void {
    this.shared = shared;
  }

  /** The window of each deployment with outcomes, for sending what the other nodes have not seen yet. */
  outcomeWindows(): ReadonlyMap<string, OutcomeWindow> {
    return this.windows;
  }

  /** Deployments that failed since the last exchange (their merged window is to be judged); clears the list. */
  takeToJudge(): string[] {
    const deployments = [...this.toJudge];
    this.toJudge.clear();
    return deployments;
  }

  /**
   * Takes on what the other nodes decided (`ejections`: every deployment's shared state, undefined = healthy) and
   * judges the merged windows of the deployments that failed here. `skip`: deployments whose local transition has
   * not reached Redis yet.
   */
  adoptShared(
    ejections: ReadonlyMap<string, Ejection | undefined>,
    mergedWindows: ReadonlyMap<string, Iterable<AccountTally>>,
    skip: ReadonlySet<string>,
  ): void {
    for (const [deployment, shared] of ejections) {
      if (skip.has(deployment)) continue;
      const local = this.ejections.get(deployment);
      if (!shared) {
        if (local) {
          this.ejections.delete(deployment);
          this.windows.get(deployment)?.clear();
        }
      } else if (!sameEjection(local, shared)) {
        const probeStartedAt = local?.count === shared.count ? local.probeStartedAt : undefined;
        this.ejections.set(deployment, { count: shared.count, until: shared.until, probeStartedAt });
      }
    }
    const now = this.now();
    for (const [deployment, tallies] of mergedWindows) {
      if (this.ejections.has(deployment) || skip.has(deployment)) continue;
      if (isOutlier(tallies, this.settings)) this.eject(deployment, 1, now);
    }
  }

  /** Judges deployments on this node's outcomes alone (their merged window could not be read). */
  judgeOwnWindows(deployments: readonly string[]): void {
    const now = this.now();
    for (const deployment of deployments) {
      const window = this.windows.get(deployment);
      if (!window || this.ejections.has(deployment)) continue;
      if (isOutlier(window.tallies(now).values(), this.settings)) this.eject(deployment, 1, now);
    }
  }

  // --- Internals ---

  private windowOf(deployment: string): OutcomeWindow {
    let window = this.windows.get(deployment);
    if (!window) {
      window = new OutcomeWindow(this.settings.windowMs);
      this.windows.set(deployment, window);
    }
    return window;
  }

  private firstFailureOfRequest(deployment: string, request: object | undefined): boolean {
    if (!request) return true;
    const seen = this.counted.get(request);
    if (!seen) {
      this.counted.set(request, [deployment]);
      return true;
    }
    if (seen.includes(deployment)) return false;
    seen.push(deployment);
    return true;
  }

  private cooldownFor(count: number): number {
    return Math.min(this.settings.cooldownMs * 2 ** Math.max(0, count - 1), this.settings.maxCooldownMs);
  }

  private eject(deployment: string, count: number, now: number): void {
    const ejection: LocalEjection = { count, until: now + this.cooldownFor(count), probeStartedAt: undefined };
    this.ejections.set(deployment, ejection);
    this.runs.delete(deployment);
    this.transitionListener?.(deployment, { kind: 'ejected', ejection: { count, until: ejection.until } });
  }

  private recover(deployment: string, ejection: Ejection): void {
    this.ejections.delete(deployment);
    // The evidence that ejected it is spent: a new ejection needs new failures.
    this.windows.get(deployment)?.clear();
    const { count, until } = ejection;
    this.transitionListener?.(deployment, { kind: 'recovered', ejection: { count, until } });
  }

  private pausedFor(deployment: string, now: number): number {
    const until = this.pauses.get(deployment);
    if (until === undefined) return 0;
    if (until > now) return until - now;
    this.pauses.delete(deployment);
    return 0;
  }

  /** Milliseconds until the ejected deployment may take a (probe) request; 0 when it is not ejected or may now. */
  private ejectedFor(deployment: string, now: number): number {
    const ejection = this.ejections.get(deployment);
    if (!ejection) return 0;
    if (ejection.until > now) return ejection.until - now;
    const probe = ejection.probeStartedAt;
    const cooldown = this.cooldownFor(ejection.count);
    if (probe !== undefined && now - probe < cooldown) return probe + cooldown - now;
    return 0;
  }

  /** Whether too few of the chain's deployments are healthy for its ejections to be honoured. */
  private inPanic(chain: RouteChain, now: number): boolean {
    if (this.settings.panicThreshold <= 0) return false;
    let total = 0;
    let healthy = 0;
    for (const route of chain) {
      for (const deployment of route.deployments) {
        total++;
        if (!this.ejections.has(deployment.id) && this.pausedFor(deployment.id, now) === 0) healthy++;
      }
    }
    return healthy * 100 < this.settings.panicThreshold * total;
  }
}
