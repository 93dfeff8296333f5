import type { RequestLogInsert } from '../../src/request-log/row-layout.js';

/**
 * A request-log row as the tests seed them: a successful, non-streamed request whose usage the upstream reported,
 * answered in 1 ms. `fields` name the request, its key and model, and whatever else the test cares about.
 */
export function successfulLogRow(
  fields: Pick<RequestLogInsert, 'request_id' | 'created_at' | 'account_id' | 'key_id' | 'key_name' | 'model'> &
    Partial<RequestLogInsert>,
): RequestLogInsert {
  return { status: 200, outcome: 'success', stream: 0, latency_ms: 1, usage_estimated: 0, ...fields };
}
