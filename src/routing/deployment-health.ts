/**
 * Health of each deployment, for the circuit breaker and for rate-limit pauses. A deployment that fails
 * `failureThreshold` times in a row is taken out of rotation for `cooldownMs`; after that one probe request is let
 * through (half-open): success closes the circuit, failure re-opens it with the cooldown doubled (up to
 * `maxCooldownMs`). An upstream that says "retry after N seconds" pauses the deployment for that long.
 *
 * State is per process and keyed by the configured deployment ids (bounded); time is read lazily, so there are no
 * timers to stop.
 */

export interface CircuitBreakerSettings {
  failureThreshold: number;
  cooldownMs: number;
  maxCooldownMs: number;
}

export type CircuitState = 'closed' | 'open' | 'half_open';

interface DeploymentState {
  consecutiveFailures: number;
  open: boolean;
  openUntil: number;
  cooldownMs: number;
  /** When the half-open probe was let through; another is admitted if it has not reported back within a cooldown. */
  probeStartedAt: number | undefined;
  /** An upstream's retry-after: no requests before this time, whatever the circuit says. */
  pausedUntil: number;
}

export interface DeploymentHealthEntry {
  deployment: string;
  state: CircuitState;
  consecutiveFailures: number;
  /** Milliseconds until the deployment takes requests again (0 = now). */
  availableInMs: number;
}

export class DeploymentHealth {
  private readonly states = new Map<string, DeploymentState>();

  constructor(
    private readonly settings: CircuitBreakerSettings,
    private readonly now: () => number = Date.now,
  ) {}

  private stateOf(deployment: string): DeploymentState {
    let state = this.states.get(deployment);
    if (!state) {
      state = {
        consecutiveFailures: 0,
        open: false,
        openUntil: 0,
        cooldownMs: this.settings.cooldownMs,
        probeStartedAt: undefined,
        pausedUntil: 0,
      };
      this.states.set(deployment, state);
    }
    return state;
  }

  /** Whether a request may go to the deployment now, without claiming the half-open probe. */
  isAvailable(deployment: string): boolean {
    return this.availableInMs(deployment) === 0;
  }

  availableInMs(deployment: string): number {
    const state = this.states.get(deployment);
    if (!state) return 0;
    const now = this.now();
    const until = Math.max(state.pausedUntil, state.open ? state.openUntil : 0);
    if (until > now) return until - now;
    if (state.open && state.probeStartedAt !== undefined && now - state.probeStartedAt < state.cooldownMs) {
      return state.probeStartedAt + state.cooldownMs - now;
    }
    return 0;
  }

  /** Whether the deployment is out only because an upstream asked for a pause (a rate limit), not a failing circuit. */
  isPaused(deployment: string): boolean {
    const state = this.states.get(deployment);
    if (!state) return false;
    const now = this.now();
    return state.pausedUntil > now && !(state.open && state.openUntil > now);
  }

  /** Claims the right to send one request; in the half-open state only one probe at a time is admitted. */
  tryAcquire(deployment: string): boolean {
    if (!this.isAvailable(deployment)) return false;
    const state = this.states.get(deployment);
    if (state?.open) state.probeStartedAt = this.now();
    return true;
  }

  succeeded(deployment: string): void {
    this.states.delete(deployment);
  }

  /** An attempt that says nothing about the deployment (the client left): give the probe back, if it was one. */
  released(deployment: string): void {
    const state = this.states.get(deployment);
    if (state) state.probeStartedAt = undefined;
  }

  /** Records a failure; `pauseMs` (an upstream's retry-after) keeps the deployment out for at least that long. */
  failed(deployment: string, pauseMs?: number): void {
    const state = this.stateOf(deployment);
    const now = this.now();
    state.consecutiveFailures++;
    if (state.open) {
      // The probe failed: stay open, and wait longer before the next one.
      state.cooldownMs = Math.min(state.cooldownMs * 2, this.settings.maxCooldownMs);
      state.openUntil = now + state.cooldownMs;
      state.probeStartedAt = undefined;
    } else if (state.consecutiveFailures >= this.settings.failureThreshold) {
      state.open = true;
      state.cooldownMs = this.settings.cooldownMs;
      state.openUntil = now + state.cooldownMs;
    }
    if (pauseMs !== undefined && pauseMs > 0) state.pausedUntil = Math.max(state.pausedUntil, now + pauseMs);
  }

  /** Every deployment with a recorded failure (the others are healthy). */
  entries(): DeploymentHealthEntry[] {
    return [...this.states.entries()].map(([deployment, state]) => {
      const availableInMs = this.availableInMs(deployment);
      return {
        deployment,
        state: state.open ? (availableInMs === 0 ? 'half_open' : 'open') : 'closed',
        consecutiveFailures: state.consecutiveFailures,
        availableInMs,
      };
    });
  }
}
