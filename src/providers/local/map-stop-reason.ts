import type { LlamaChatResponse } from 'node-llama-cpp';

export type FinishReason = 'stop' | 'length';

/** node-llama-cpp's reason for ending a generation -> OpenAI's finish_reason. */
export function mapStopReason(stopReason: LlamaChatResponse['metadata']['stopReason']): FinishReason {
  switch (stopReason) {
    case 'maxTokens':
      return 'length';
    // The model ended its turn (end-of-generation token or the template's end marker) or hit a client stop sequence.
    case 'eogToken':
    case 'stopGenerationTrigger':
    case 'customStopTrigger':
      return 'stop';
    default:
      // 'abort' is thrown, never returned, and function calls are never enabled; anything new ends normally.
      return 'stop';
  }
}

/**
 * Which of the client's stop sequences ended the generation: node-llama-cpp names the trigger it matched. Reported as
 * the choice's `stop_reason`, as vLLM does, so a Messages answer can say `stop_sequence` and which one.
 */
export function matchedStop(
  metadata: LlamaChatResponse['metadata'],
  stopSequences: readonly string[],
): string | undefined {
  if (metadata.stopReason !== 'customStopTrigger') return undefined;
  const trigger = metadata.customStopTrigger.filter((part): part is string => typeof part === 'string').join('');
  return stopSequences.includes(trigger) ? trigger : undefined;
}
