import type { ApiError } from '../errors/api-error.js';
import { UpstreamFailure } from '../upstream/failure.js';
import type { AccountTally } from './outcome-window.js';

/**
 * Whether failures are the deployment's, or may be the requests' own. Upstreams fail deterministically on some
 * inputs (a prompt that always gets a 500, a body that times out), so a failure rate alone lets one tenant take a
 * model away from everyone. Two detectors, after Envoy's outlier detection:
 * - consecutive failures that cannot follow the request (connection refused, credentials or model rejected);
 * - the failure percentage over a sliding window with a minimum of requests, where every account weighs the same
 *   (the mean of the accounts' own failure rates, so a flood from one account is one voice), and failures from at
 *   least `minimumAccounts` accounts. One account failing while the others succeed is never enough.
 */

export interface OutlierSettings {
  failureThreshold: number;
  failurePercentage: number;
  minimumRequests: number;
  minimumAccounts: number;
}

/** Connection errors that happen before the upstream has seen the request: no prompt can cause them. */
const beforeTheRequestCodes = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);
/** The upstream refused the gateway's credentials, account or model name: the same answer whatever is asked. */
const configurationCodes = new Set(['upstream_auth_failed', 'upstream_payment_required', 'upstream_not_found']);

/** Whether a failure may be caused by the request itself rather than by the deployment. */
export function mayFollowTheRequest(error: ApiError | undefined): boolean {
  if (!error) return true;
  if (error.code && configurationCodes.has(error.code)) return false;
  const cause = error.cause;
  if (cause instanceof UpstreamFailure) {
    if (cause.kind === 'connect_timeout') return false;
    const code = (cause.cause as NodeJS.ErrnoException | undefined)?.code;
    if (cause.kind === 'unreachable' && code !== undefined && beforeTheRequestCodes.has(code)) return false;
  }
  return true;
}

/** The window detector: whether these outcomes say the deployment itself is failing. */
export function isOutlier(tallies: Iterable<AccountTally>, settings: OutlierSettings): boolean {
  let requests = 0;
  let accounts = 0;
  let failingAccounts = 0;
  let rateSum = 0;
  for (const tally of tallies) {
    const total = tally.successes + tally.failures;
    if (total === 0) continue;
    requests += total;
    accounts++;
    rateSum += tally.failures / total;
    if (tally.failures > 0) failingAccounts++;
  }
  if (requests < settings.minimumRequests || failingAccounts < settings.minimumAccounts) return false;
  return (rateSum / accounts) * 100 >= settings.failurePercentage;
}
