import type { ChatCompletion, Usage } from '../../openai/types.js';
import { malformed } from '../http.js';
import { convertUsage } from './convert-usage.js';
import { mapStopReason } from './map-stop-reason.js';
import { anthropicStreamError } from './parse-error.js';
import type { AnthropicUsage } from './wire-types.js';

/**
 * Anthropic stream events -> OpenAI chunks, one translator per stream (its state lives in this closure):
 * - message_start: the role delta;
 * - text_delta -> `content`; thinking_delta -> `reasoning_content`, and the same piece as a `thinking_blocks` fragment
 *   (LiteLLM's streamed shape, plus the block's `index` among the thinking blocks): `{type: "thinking", thinking,
 *   index}` pieces, then the block's signature_delta as `{type: "thinking", thinking: "", signature, index}`; a
 *   redacted_thinking block is one fragment `{type: "redacted_thinking", data, index}`. The index is what the openai
 *   Python SDK's stream helper merges list fragments by (it throws for fragments without one), and lets any client
 *   join each block's pieces to send it back;
 * - a tool_use block start -> the tool call's first delta (id, type, name, `arguments: ""`), numbered over tool
 *   blocks only; its input_json_delta fragments -> `function.arguments` deltas; a tool whose input never streamed
 *   gets `"{}"` so the arguments are valid JSON;
 * - message_delta: stop reason and the cumulative usage; message_stop: the finish chunk, then the usage chunk;
 * - ping and unknown events are ignored (Anthropic may add event types); an `error` event throws.
 */

export interface AnthropicStreamEvent {
  type?: string;
  [field: string]: unknown;
}

export interface AnthropicStreamTranslator {
  /** The chunks one event produces; throws an ApiError for `error` events. */
  push(event: AnthropicStreamEvent): ChatCompletion[];
  /** At the end of the body: throws when the stream stopped before `message_stop`. */
  /** Checks the stream was finished (message_stop); it adds no chunk of its own. */
  end(): ChatCompletion[];
}

interface ToolBlock {
  index: number;
  sentArguments: boolean;
}

export function createAnthropicStreamTranslator(
  providerName: string,
  fallbackModel: string,
  created: number,
): AnthropicStreamTranslator {
  let id = '';
  let model = fallbackModel;
  let usage: AnthropicUsage = {};
  let finishReason = 'stop';
  let stopped = false;
  const toolBlocks = new Map<number, ToolBlock>();

  const chunk = (delta: Record<string, unknown>, finish: string | null = null): ChatCompletion => ({
    id,
    object: 'chat.completion.chunk',
    created,
    model,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
  });
  // A block's text, at its start or in a delta: nothing for an empty one.
  const textChunks = (text: unknown): ChatCompletion[] =>
    typeof text !== 'string' || text === '' ? [] : [chunk({ content: text })];
  // Anthropic's block index -> the block's index among the thinking blocks (the fragments' `index`).
  const thinkingBlocks = new Map<number, number>();
  const thinkingIndex = (blockIndex: number) => thinkingBlocks.get(blockIndex) ?? 0;
  const openThinkingBlock = (blockIndex: number) => {
    const index = thinkingBlocks.size;
    thinkingBlocks.set(blockIndex, index);
    return index;
  };
  const thinkingChunks = (thinking: unknown, index: number): ChatCompletion[] => {
    if (typeof thinking !== 'string' || thinking === '') return [];
    return [chunk({ reasoning_content: thinking, thinking_blocks: [{ type: 'thinking', thinking, index }] })];
  };
  const signatureChunks = (signature: unknown, index: number): ChatCompletion[] => {
    if (typeof signature !== 'string' || signature === '') return [];
    return [chunk({ thinking_blocks: [{ type: 'thinking', thinking: '', signature, index }] })];
  };
  const toolDelta = (index: number, fields: Record<string, unknown>) => chunk({ tool_calls: [{ index, ...fields }] });
  const mergeUsage = (next: unknown) => {
    if (!next || typeof next !== 'object') return;
    for (const [key, value] of Object.entries(next as Record<string, unknown>)) {
      // Any value, not only numbers: convertUsage decides whether the counts can be believed.
      if (value !== undefined && value !== null) (usage as Record<string, unknown>)[key] = value;
    }
  };

  return {
    push(event) {
      switch (event.type) {
        case 'message_start': {
          const message = (event.message ?? {}) as { id?: unknown; model?: unknown; usage?: unknown };
          if (typeof message.id === 'string') id = message.id;
          if (typeof message.model === 'string') model = message.model;
          usage = {};
          mergeUsage(message.usage);
          return [chunk({ role: 'assistant', content: '' })];
        }
        case 'content_block_start': {
          const index = Number(event.index);
          const block = (event.content_block ?? {}) as Record<string, unknown>;
          if (block.type === 'text') return textChunks(block.text);
          if (block.type === 'thinking') {
            const thinking = openThinkingBlock(index);
            return [...thinkingChunks(block.thinking, thinking), ...signatureChunks(block.signature, thinking)];
          }
          if (block.type === 'redacted_thinking' && typeof block.data === 'string') {
            const redacted = { type: 'redacted_thinking', data: block.data, index: openThinkingBlock(index) };
            return [chunk({ thinking_blocks: [redacted] })];
          }
          if (block.type === 'tool_use') {
            const tool: ToolBlock = { index: toolBlocks.size, sentArguments: false };
            toolBlocks.set(index, tool);
            const input = block.input;
            const initial =
              input && typeof input === 'object' && Object.keys(input).length > 0 ? JSON.stringify(input) : '';
            if (initial) tool.sentArguments = true;
            return [
              toolDelta(tool.index, {
                id: String(block.id),
                type: 'function',
                function: { name: String(block.name), arguments: initial },
              }),
            ];
          }
          return [];
        }
        case 'content_block_delta': {
          const delta = (event.delta ?? {}) as Record<string, unknown>;
          if (delta.type === 'text_delta') return textChunks(delta.text);
          if (delta.type === 'thinking_delta')
            return thinkingChunks(delta.thinking, thinkingIndex(Number(event.index)));
          if (delta.type === 'signature_delta') {
            return signatureChunks(delta.signature, thinkingIndex(Number(event.index)));
          }
          if (delta.type === 'input_json_delta') {
            const tool = toolBlocks.get(Number(event.index));
            if (!tool || typeof delta.partial_json !== 'string' || delta.partial_json === '') return [];
            tool.sentArguments = true;
            return [toolDelta(tool.index, { function: { arguments: delta.partial_json } })];
          }
          return [];
        }
        case 'content_block_stop': {
          const tool = toolBlocks.get(Number(event.index));
          if (!tool || tool.sentArguments) return [];
          tool.sentArguments = true;
          return [toolDelta(tool.index, { function: { arguments: '{}' } })];
        }
        case 'message_delta': {
          const delta = (event.delta ?? {}) as { stop_reason?: unknown };
          if (typeof delta.stop_reason === 'string') finishReason = mapStopReason(delta.stop_reason);
          mergeUsage(event.usage);
          return [];
        }
        case 'message_stop': {
          stopped = true;
          const final: Usage | undefined = convertUsage(usage);
          // Usage that cannot be believed is left out: the relay then estimates it, as for an upstream that sent none.
          if (!final) return [chunk({}, finishReason)];
          return [chunk({}, finishReason), { ...chunk({}), choices: [], usage: final }];
        }
        case 'error':
          throw anthropicStreamError(providerName, event);
        default:
          return [];
      }
    },
    end() {
      if (!stopped) throw malformed(providerName, 'a stream that ended before message_stop');
      return [];
    },
  };
}
