import type { ChatCompletion, ToolCall } from '../../openai/types.js';
import { convertUsage } from './convert-usage.js';
import { mapStopReason } from './map-stop-reason.js';
import type { AnthropicResponse } from './wire-types.js';

/**
 * A Messages API response as an OpenAI `chat.completion`: text blocks joined into `content` (null when there is none
 * and the model called tools), `tool_use` blocks as `tool_calls` with JSON-encoded arguments, thinking as
 * `reasoning_content` (the field DeepSeek and vLLM use for reasoning text), the stop reason mapped. Thinking blocks
 * also go whole, signature and all, in `thinking_blocks` (LiteLLM's field), so that a client can send them back with
 * the tool calls they led to (convert-thinking.ts); redacted thinking, which has no text, only there.
 */
export function convertResponse(response: AnthropicResponse, created: number): ChatCompletion {
  let text = '';
  let sawText = false;
  let reasoning = '';
  const toolCalls: ToolCall[] = [];
  const thinkingBlocks: Array<Record<string, unknown>> = [];
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
      const signature = typeof block.signature === 'string' ? { signature: block.signature } : {};
      thinkingBlocks.push({ type: 'thinking', thinking: block.thinking, ...signature });
    } else if (block.type === 'redacted_thinking' && typeof block.data === 'string') {
      thinkingBlocks.push({ type: 'redacted_thinking', data: block.data });
    }
  }
  const message: Record<string, unknown> = {
    role: 'assistant',
    content: sawText || toolCalls.length === 0 ? text : null,
    refusal: null,
  };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  if (reasoning) message.reasoning_content = reasoning;
  if (thinkingBlocks.length > 0) message.thinking_blocks = thinkingBlocks;
  return {
    id: response.id,
    object: 'chat.completion',
    created,
    model: response.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: mapStopReason(response.stop_reason) }],
    usage: convertUsage(response.usage ?? {}),
  };
}
