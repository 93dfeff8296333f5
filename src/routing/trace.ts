import type { ModelPricing } from '../config/schema.js';

/** What dispatch learned about one request: every attempt, and what served it. Part of the request-log row. */

export interface AttemptRecord {
  /** The public model this attempt served (the requested one or a fallback). */
  model: string;
  /** Deployment id (`provider/upstream_model`); empty for a route skipped before any deployment was tried. */
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

/** Filled in as dispatch goes, so it is complete even when dispatch throws. */
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
