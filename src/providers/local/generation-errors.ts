import { ApiError, apiError } from '../../errors/api-error.js';

/** Why a generation ended early, as the client (or the request log) should see it. */
export function abortError(reason: unknown): ApiError {
  if (reason instanceof ApiError) return reason;
  return apiError('client_closed_request', 'The request was cancelled.');
}

/** A failure inside node-llama-cpp while generating, as a 500 that names it. */
export function generationFailed(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  return apiError(
    'local_generation_failed',
    `The local model failed while generating: ${error instanceof Error ? error.message : String(error)}`,
    { cause: error },
  );
}
