/**
 * OpenAI `finish_reason` -> Anthropic `stop_reason`: stop -> end_turn (stop_sequence when the upstream said which
 * stop sequence matched), length -> max_tokens, tool_calls -> tool_use, content_filter -> refusal. An answer that
 * called tools is `tool_use` whatever the upstream said (some servers finish tool calls with "stop"), unless it was
 * cut short.
 */

export type StopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'refusal';

export interface StopInfo {
  stop_reason: StopReason;
  stop_sequence: string | null;
}

export function mapFinishReason(
  finishReason: string | null | undefined,
  calledTools: boolean,
  matchedStop: string | undefined,
): StopInfo {
  switch (finishReason) {
    case 'length':
      return { stop_reason: 'max_tokens', stop_sequence: null };
    case 'content_filter':
      return { stop_reason: 'refusal', stop_sequence: null };
    case 'tool_calls':
    case 'function_call':
      return { stop_reason: 'tool_use', stop_sequence: null };
  }
  if (calledTools) return { stop_reason: 'tool_use', stop_sequence: null };
  if (matchedStop !== undefined) return { stop_reason: 'stop_sequence', stop_sequence: matchedStop };
  return { stop_reason: 'end_turn', stop_sequence: null };
}

/**
 * Which of the client's stop sequences ended the answer, when the upstream tells: vLLM reports it as the choice's
 * `stop_reason` (as the local provider does), SGLang as `matched_stop`. OpenAI and Gemini do not say, so their
 * answers that stopped on a sequence read as `end_turn`.
 */
export function matchedStopSequence(
  choice: Record<string, unknown> | undefined,
  stopSequences: readonly string[] | undefined,
): string | undefined {
  if (!choice || !stopSequences || stopSequences.length === 0) return undefined;
  for (const candidate of [choice.stop_reason, choice.matched_stop]) {
    if (typeof candidate === 'string' && stopSequences.includes(candidate)) return candidate;
  }
  return undefined;
}
