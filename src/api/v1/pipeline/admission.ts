import type { ModelPricing } from '../../../config/schema.js';
import { ApiError } from '../../../errors/api-error.js';
import type { Principal } from '../../../keys/authenticate.js';
import { type Admission, admittedWithoutLimits, type Limiter } from '../../../limits/limiter.js';
import type { Metrics } from '../../../observability/metrics.js';
import { costOf } from '../../../usage/usage.js';
import type { TokenReservation } from './endpoint.js';

/**
 * Rate limits and budgets of the key and its account: tokens and cost are reserved from the endpoint's estimate and
 * settled from the real usage once the request is over. Keys without limits (the usual case) are admitted without a
 * promise or a lookup.
 */
export function admit(
  limiter: Limiter,
  metrics: Metrics,
  principal: Principal,
  reservation: TokenReservation,
  pricing: ModelPricing | undefined,
): Admission | Promise<Admission> {
  if (principal.limitSubjects.length === 0) return admittedWithoutLimits;
  const { promptTokens, completionTokens } = reservation;
  const estimatedCostUsd =
    costOf(
      {
        promptTokens,
        completionTokens,
        totalTokens: promptTokens + completionTokens,
        cachedTokens: 0,
        cacheWriteTokens: 0,
        reasoningTokens: 0,
        estimated: true,
      },
      pricing,
    ) ?? 0;
  return limiter
    .admit({
      partition: principal.accountId,
      subjects: principal.limitSubjects,
      estimatedTokens: promptTokens + completionTokens,
      estimatedCostUsd,
    })
    .then(
      (admission) => {
        metrics.limiterDecisions.inc({ decision: 'admitted', limit: 'none' });
        return admission;
      },
      (error: unknown) => {
        if (error instanceof ApiError) {
          const decision =
            error.status === 503
              ? 'unavailable'
              : error.type === 'insufficient_quota'
                ? 'quota_exceeded'
                : 'rate_limited';
          metrics.limiterDecisions.inc({ decision, limit: error.type });
        }
        throw error;
      },
    );
}
