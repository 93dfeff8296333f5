import type { ChatCompletion, ChatCompletionChoice, ToolCall } from '../../openai/types.js';
import { attachSignature, newToolCallId } from '../tool-call-id.js';
import { convertLogprobs } from './convert-logprobs.js';
import { convertUsage } from './convert-usage.js';
import { mapFinishReason } from './map-finish-reason.js';
import type { GeminiPart, GeminiResponse } from './wire-types.js';

/**
 * A `generateContent` response as an OpenAI `chat.completion`: one choice per candidate; text parts joined into
 * `content`, thought parts into `reasoning_content`; `functionCall` parts as tool calls with minted ids that carry the
 * call's thought signature (see tool-call-id.ts) and `args` JSON-encoded. A prompt blocked before any candidate was
 * generated is one empty choice finished by `content_filter`.
 */

export function toolCallOf(part: GeminiPart): ToolCall {
  return {
    id: attachSignature(newToolCallId(), part.thoughtSignature),
    type: 'function',
    function: { name: String(part.functionCall?.name ?? ''), arguments: JSON.stringify(part.functionCall?.args ?? {}) },
  };
}

export function responseId(response: GeminiResponse): string {
  return response.responseId ? `chatcmpl-${response.responseId}` : `chatcmpl-${newToolCallId().slice(5)}`;
}

export function convertResponse(response: GeminiResponse, fallbackModel: string, created: number): ChatCompletion {
  const candidates = response.candidates ?? [];
  const choices: ChatCompletionChoice[] = candidates.map((candidate, position) => {
    let text = '';
    let reasoning = '';
    const toolCalls: ToolCall[] = [];
    for (const part of candidate.content?.parts ?? []) {
      if (part.functionCall) toolCalls.push(toolCallOf(part));
      else if (typeof part.text === 'string') {
        if (part.thought) reasoning += part.text;
        else text += part.text;
      }
    }
    const message: Record<string, unknown> = {
      role: 'assistant',
      content: text === '' && toolCalls.length > 0 ? null : text,
      refusal: null,
    };
    if (toolCalls.length > 0) message.tool_calls = toolCalls;
    if (reasoning) message.reasoning_content = reasoning;
    return {
      index: candidate.index ?? position,
      message,
      logprobs: convertLogprobs(candidate.logprobsResult),
      finish_reason: mapFinishReason(candidate.finishReason, toolCalls.length > 0),
    };
  });
  if (choices.length === 0) {
    choices.push({
      index: 0,
      message: { role: 'assistant', content: null, refusal: null },
      logprobs: null,
      finish_reason: response.promptFeedback?.blockReason ? 'content_filter' : 'stop',
    });
  }
  const completion: ChatCompletion = {
    id: responseId(response),
    object: 'chat.completion',
    created,
    model: response.modelVersion ?? fallbackModel,
    choices,
  };
  if (response.usageMetadata) completion.usage = convertUsage(response.usageMetadata);
  return completion;
}
