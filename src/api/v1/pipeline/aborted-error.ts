import { ApiError, apiError } from '../../../errors/api-error.js';

/**
 * Why a stream was cut short by its cancellation: the server's own reason (shutdown: an ApiError), or the client's
 * leaving, which reaches a response still waiting for its connection (pipelined) before its socket says so.
 */
export function abortedError(reason: unknown): ApiError {
  if (reason instanceof ApiError) return reason;
  if (reason === 'client_closed') return apiError('client_closed_request', 'The request was cancelled.');
  return apiError('service_unavailable', 'The request was interrupted.');
}
