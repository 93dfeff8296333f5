import { anthropicStreamError } from '../../../errors/render-anthropic.js';
import { reasoningText } from '../../../openai/reasoning-text.js';
import type { ChatCompletion, Usage } from '../../../openai/types.js';
import { randomId } from '../../../providers/tool-call-id.js';
import { sseEvent } from '../../../upstream/sse.js';
import { toAnthropicUsage } from './anthropic-usage.js';
import { type MessageContext, newMessageId } from './from-chat-completion.js';
import { mapFinishReason, matchedStopSequence } from './map-finish-reason.js';
import { toolInputJson } from './tool-input.js';

/**
 * Chat chunks -> Anthropic stream events, one translator per stream (its state lives in this closure), in the order
 * Anthropic sends them: `message_start` (empty content), then block by block `content_block_start`, its deltas,
 * `content_block_stop`; then `message_delta` (stop reason, cumulative usage) and `message_stop`. Each kind of content
 * gets a block of its own: reasoning opens a thinking block, text after it a new text block, and back again, so a
 * thinking delta never lands in a text block (what breaks Claude Code behind other gateways).
 *
 * Tool calls are held until the upstream finishes, then sent one block each, in call order, with their arguments in
 * one `input_json_delta` checked to be a JSON object: chat upstreams may interleave the fragments of parallel calls
 * (Anthropic's blocks cannot interleave), and arguments that do not parse would make the client's SDK throw.
 *
 * Each function returns whole SSE events, one string each, ready to write.
 */

export interface MessagesStreamOptions extends MessageContext {
  /**
   * `input_tokens` of `message_start`. Chat upstreams report usage only at the end (the real counts then come in
   * `message_delta`), so this is the gateway's estimate of the prompt.
   */
  estimatedInputTokens?: number;
}

export interface MessagesStreamTranslator {
  /** The events of one chat chunk; the first chunk also brings `message_start`. */
  push(chunk: ChatCompletion): string[];
  /**
   * The closing events once the upstream finished: open blocks closed, the tool calls, `message_delta` and
   * `message_stop`. `fallbackUsage` (the gateway's estimate) is reported when the upstream reported none.
   */
  finish(fallbackUsage?: Usage): string[];
  /** A failure after the stream began: an `error` event, after which the stream ends. */
  fail(error: unknown): string;
  /** A `ping` event, to keep an idle connection open. */
  ping(): string;
}

interface PendingToolCall {
  id: string;
  name: string;
  arguments: string;
}

type TextKind = 'text' | 'thinking';

const event = (type: string, data: Record<string, unknown>): string =>
  sseEvent(type, JSON.stringify({ type, ...data }));

export function createMessagesStreamTranslator(options: MessagesStreamOptions): MessagesStreamTranslator {
  const messageId = options.messageId ?? newMessageId();
  let started = false;
  let finished = false;
  let nextIndex = 0;
  let open: { kind: TextKind; index: number } | undefined;
  const toolCalls = new Map<number, PendingToolCall>();
  let finishReason: string | null | undefined;
  let matchedStop: string | undefined;
  let sawText = false;
  let sawRefusal = false;
  let usage: Usage | undefined;

  const start = (model: string | undefined, events: string[]) => {
    if (started) return;
    started = true;
    events.push(
      event('message_start', {
        message: {
          id: messageId,
          type: 'message',
          role: 'assistant',
          model: model || options.model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: {
            input_tokens: options.estimatedInputTokens ?? 0,
            output_tokens: 0,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 0,
          },
        },
      }),
    );
  };

  const close = (events: string[]) => {
    if (!open) return;
    events.push(event('content_block_stop', { index: open.index }));
    open = undefined;
  };

  const append = (kind: TextKind, text: string, events: string[]) => {
    if (open?.kind !== kind) {
      close(events);
      open = { kind, index: nextIndex++ };
      const block = kind === 'text' ? { type: 'text', text: '' } : { type: 'thinking', thinking: '', signature: '' };
      events.push(event('content_block_start', { index: open.index, content_block: block }));
    }
    const delta = kind === 'text' ? { type: 'text_delta', text } : { type: 'thinking_delta', thinking: text };
    events.push(event('content_block_delta', { index: open.index, delta }));
  };

  const collectToolCalls = (calls: unknown) => {
    if (!Array.isArray(calls)) return;
    for (const call of calls as Array<{ index?: unknown; id?: unknown; function?: Record<string, unknown> }>) {
      const index = typeof call?.index === 'number' ? call.index : toolCalls.size;
      let pending = toolCalls.get(index);
      if (!pending) {
        pending = { id: '', name: '', arguments: '' };
        toolCalls.set(index, pending);
      }
      if (typeof call.id === 'string' && call.id !== '' && pending.id === '') pending.id = call.id;
      const name = call.function?.name;
      if (typeof name === 'string' && pending.name === '') pending.name = name;
      const fragment = call.function?.arguments;
      if (typeof fragment === 'string') pending.arguments += fragment;
    }
  };

  const sendToolCalls = (events: string[]) => {
    for (const index of [...toolCalls.keys()].sort((a, b) => a - b)) {
      const call = toolCalls.get(index) as PendingToolCall;
      const blockIndex = nextIndex++;
      events.push(
        event('content_block_start', {
          index: blockIndex,
          content_block: { type: 'tool_use', id: call.id || randomId('toolu_'), name: call.name, input: {} },
        }),
        event('content_block_delta', {
          index: blockIndex,
          delta: { type: 'input_json_delta', partial_json: toolInputJson(call.arguments) },
        }),
        event('content_block_stop', { index: blockIndex }),
      );
    }
  };

  return {
    push(chunk) {
      const events: string[] = [];
      if (finished) return events;
      start(chunk.model, events);
      if (chunk.usage) usage = chunk.usage;
      const choice = chunk.choices.find((candidate) => candidate?.index === 0) ?? chunk.choices[0];
      const delta = choice?.delta as Record<string, unknown> | undefined;
      if (!choice || !delta) return events;
      const reasoning = reasoningText(delta);
      if (reasoning !== undefined) append('thinking', reasoning, events);
      if (typeof delta.content === 'string' && delta.content !== '') {
        sawText = true;
        append('text', delta.content, events);
      }
      if (typeof delta.refusal === 'string' && delta.refusal !== '') {
        sawRefusal = true;
        append('text', delta.refusal, events);
      }
      collectToolCalls(delta.tool_calls);
      if (choice.finish_reason) {
        finishReason = choice.finish_reason;
        matchedStop = matchedStopSequence(choice, options.stopSequences);
      }
      return events;
    },

    finish(fallbackUsage) {
      const events: string[] = [];
      if (finished) return events;
      finished = true;
      start(undefined, events);
      close(events);
      sendToolCalls(events);
      const stop =
        sawRefusal && !sawText
          ? { stop_reason: 'refusal', stop_sequence: null }
          : mapFinishReason(finishReason, toolCalls.size > 0, matchedStop);
      events.push(
        event('message_delta', { delta: stop, usage: toAnthropicUsage(usage ?? fallbackUsage) }),
        event('message_stop', {}),
      );
      return events;
    },

    fail(error) {
      finished = true;
      return anthropicStreamError(error);
    },

    ping() {
      return event('ping', {});
    },
  };
}
