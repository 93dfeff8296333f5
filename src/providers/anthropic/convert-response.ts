import type { ChatCompletion, ToolCall } from '../../openai/types.js';
import { convertUsage } from './convert-usage.js';
import { mapStopReason } from './map-stop-reason.js';
import type { AnthropicResponse } from './wire-types.js';

/**
 * A Messages API response as an OpenAI `chat.completion`: text blocks joined into `content` (null when there is none
 * and the model called tools), `tool_use` blocks as `tool_calls` with JSON-encoded arguments, thinking as
 * `reasoning_content` (the field DeepSeek and vLLM use for reasoning text), the stop reason mapped.
 */
export function convertResponse(response: AnthropicResponse, created: number): ChatCompletion {
  let text = '';
  let sawText = false;
  let reasoning = '';
  const toolCalls: ToolCall[] = [];
  for (const block of response.content ?? []) {
    if (block.type === 'text' && typeof block.text === 'string') {
      text += block.text;
      sawText = true;
    } else if (block.type === 'tool_use') {
      toolCalls.push({
        id: String(block.id),
        type: 'function',
        function: { name: String(block.name), arguments: JSON.stringify(block.input ?? {}) },
      });
    } else if (block.type === 'thinking' && typeof block.thinking === 'string') {
      reasoning += block.thinking;
    }
  }
  const message: Record<string, unknown> = {
    role: 'assistant',
    content: sawText || toolCalls.length === 0 ? text : null,
    refusal: null,
  };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  if (reasoning) message.reasoning_content = reasoning;
  return {
    id: response.id,
    object: 'chat.completion',
    created,
    model: response.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: mapStopReason(response.stop_reason) }],
    usage: convertUsage(response.usage ?? {}),
  };
}
