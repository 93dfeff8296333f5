import { randomUUID } from 'node:crypto';
import type { ChatCompletion, Usage } from '../../openai/types.js';
import type { FinishReason } from './map-stop-reason.js';

/** Builds the OpenAI objects a local generation is reported as: pure functions of what the model produced. */

export interface LocalUsage {
  promptTokens: number;
  /** Prompt tokens whose evaluation was reused from the slot's previous request (a shared prefix). */
  cachedTokens: number;
  completionTokens: number;
  reasoningTokens: number;
}

export interface CompletionIdentity {
  id: string;
  created: number;
  model: string;
}

export function newIdentity(model: string): CompletionIdentity {
  return { id: `chatcmpl-${randomUUID().replaceAll('-', '')}`, created: Math.floor(Date.now() / 1000), model };
}

export function toWireUsage(usage: LocalUsage): Usage {
  return {
    prompt_tokens: usage.promptTokens,
    completion_tokens: usage.completionTokens,
    total_tokens: usage.promptTokens + usage.completionTokens,
    prompt_tokens_details: { cached_tokens: usage.cachedTokens },
    completion_tokens_details: { reasoning_tokens: usage.reasoningTokens },
  };
}

export function toCompletion(
  identity: CompletionIdentity,
  output: { content: string; reasoning: string; finishReason: FinishReason; stopSequence?: string; usage: LocalUsage },
): ChatCompletion {
  const message: Record<string, unknown> = {
    role: 'assistant',
    content: output.content,
    refusal: null,
    annotations: [],
  };
  if (output.reasoning) message.reasoning_content = output.reasoning;
  return {
    id: identity.id,
    object: 'chat.completion',
    created: identity.created,
    model: identity.model,
    choices: [withStopSequence({ index: 0, message, logprobs: null, finish_reason: output.finishReason }, output)],
    usage: toWireUsage(output.usage),
  };
}

function chunk(identity: CompletionIdentity, delta: Record<string, unknown>, finishReason: FinishReason | null) {
  return {
    id: identity.id,
    object: 'chat.completion.chunk' as const,
    created: identity.created,
    model: identity.model,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
  };
}

export const roleChunk = (identity: CompletionIdentity): ChatCompletion =>
  chunk(identity, { role: 'assistant', content: '' }, null);

export const contentChunk = (identity: CompletionIdentity, content: string): ChatCompletion =>
  chunk(identity, { content }, null);

export const reasoningChunk = (identity: CompletionIdentity, reasoning: string): ChatCompletion =>
  chunk(identity, { reasoning_content: reasoning }, null);

export function finishChunk(
  identity: CompletionIdentity,
  finish: { finishReason: FinishReason; stopSequence?: string },
): ChatCompletion {
  const finished = chunk(identity, {}, finish.finishReason);
  return { ...finished, choices: finished.choices.map((choice) => withStopSequence(choice, finish)) };
}

/** The stop sequence that ended the answer as the choice's `stop_reason`, vLLM's field (matched_stop in SGLang). */
function withStopSequence<Choice extends object>(
  choice: Choice,
  finish: { stopSequence?: string },
): Choice & { stop_reason?: string } {
  return finish.stopSequence === undefined ? choice : { ...choice, stop_reason: finish.stopSequence };
}

/** The stream's last chunk: no choices, the usage (wire contract §3.1). */
export const usageChunk = (identity: CompletionIdentity, usage: LocalUsage): ChatCompletion => ({
  id: identity.id,
  object: 'chat.completion.chunk',
  created: identity.created,
  model: identity.model,
  choices: [],
  usage: toWireUsage(usage),
});
