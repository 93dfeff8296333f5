import { ApiError, apiError, toApiError } from '../../../errors/api-error.js';
import { openAiStreamError } from '../../../errors/render-openai.js';
import type { CancelSignal } from '../../../server/cancellation.js';
import { sseDone } from '../../../upstream/sse.js';
import type { SseResponse } from './sse-response.js';

/**
 * Ends an OpenAI-style stream that failed after its first byte. A client that left cannot be told anything; one still
 * there gets an in-band error, then [DONE]: never a clean-looking finish. Returns the error for the log.
 */
export async function endFailedStream(sse: SseResponse, signal: CancelSignal, error: unknown): Promise<ApiError> {
  const failure = sse.closed ? toApiError(error) : signal.aborted ? abortedError(signal.reason) : toApiError(error);
  if (!sse.closed) {
    await sse.write(openAiStreamError(failure));
    await sse.write(sseDone);
  }
  sse.end();
  return failure;
}

/** Why the gateway itself cut a stream short (the reason given to the request's cancellation). */
function abortedError(reason: unknown): ApiError {
  if (reason instanceof ApiError) return reason;
  return apiError('service_unavailable', 'The request was interrupted.');
}
