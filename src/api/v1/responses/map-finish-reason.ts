/**
 * A chat `finish_reason` as the response's status: `length` -> incomplete because of `max_output_tokens`,
 * `content_filter` -> incomplete because of `content_filter`; anything else (stop, tool_calls, …) -> completed.
 */

export interface Completion {
  status: 'completed' | 'incomplete';
  incompleteDetails: { reason: string } | null;
}

const completed: Completion = { status: 'completed', incompleteDetails: null };

export function mapFinishReason(reason: unknown): Completion {
  switch (reason) {
    case 'length':
      return { status: 'incomplete', incompleteDetails: { reason: 'max_output_tokens' } };
    case 'content_filter':
      return { status: 'incomplete', incompleteDetails: { reason: 'content_filter' } };
    default:
      return completed;
  }
}
