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
