import { reasoningText } from '../../../openai/reasoning-text.js';
import type { ChatCompletion, ToolCall, Usage } from '../../../openai/types.js';
import { mapFinishReason } from './map-finish-reason.js';
import {
  convertAnnotations,
  functionCallItem,
  logprobsOf,
  messageItem,
  outputText,
  reasoningItem,
  summarizes,
} from './output-items.js';
import { completeThinkingBlocks, encodeThinking } from './reasoning-envelope.js';
import type { ToolNameMap } from './tool-names.js';
import type { OutputItem, OutputMessage, ResponseObject } from './types.js';
import { toResponseUsage } from './usage.js';

/**
 * A whole chat completion as the finished response: the object built for the request (response-object.ts) with its
 * output and usage. Output items come in the order a model produces them: reasoning (its text, `reasoning_content`,
 * as the summary when the request asked for one; otherwise `summary: []`, as OpenAI answers), then the message
 * (`output_text` with `annotations`, and a `refusal` part), then one `function_call` per tool call under its original
 * name and namespace. Signed thinking (`thinking_blocks`, Claude's) goes into the reasoning item's `encrypted_content`
 * when the context says so (reasoning-envelope.ts). A completion cut by `length` or `content_filter` is `incomplete`,
 * and so is its last item.
 */

export interface FromChatContext {
  /** The response as created for this request (createResponseObject). */
  response: ResponseObject;
  toolNames: ToolNameMap;
  /** Usage to report when the completion has none (the gateway's estimate). */
  usage?: Usage;
  /** Unix seconds. */
  completedAt?: number;
  /** Carry signed thinking in `encrypted_content` (asked for with `include`, or kept for a stored response). */
  encryptThinking?: boolean;
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part) => (typeof part?.text === 'string' ? part.text : '')).join('');
}

export function fromChatCompletion(completion: ChatCompletion, context: FromChatContext): ResponseObject {
  const choice = completion.choices[0];
  const message = (choice?.message ?? {}) as Record<string, unknown>;
  const { status, incompleteDetails } = mapFinishReason(choice?.finish_reason);
  const output: OutputItem[] = [];

  const reasoning = reasoningText(message);
  const signed =
    context.encryptThinking === true && Array.isArray(message.thinking_blocks)
      ? completeThinkingBlocks(message.thinking_blocks)
      : [];
  if (reasoning !== undefined || signed.length > 0) {
    const summarized = summarizes(context.response);
    const item = reasoningItem(summarized ? (reasoning ?? '') : '', 'completed');
    // Claude's thinking is a summary, given only when asked for; other reasoning is the model's own text.
    if (!summarized && reasoning && !Array.isArray(message.thinking_blocks)) {
      item.content = [{ type: 'reasoning_text', text: reasoning }];
    }
    if (signed.length > 0) item.encrypted_content = encodeThinking(signed);
    output.push(item);
  }

  const content: OutputMessage['content'] = [];
  const text = textOf(message.content);
  if (text !== '')
    content.push(outputText(text, convertAnnotations(message.annotations), logprobsOf(choice?.logprobs)));
  if (typeof message.refusal === 'string' && message.refusal !== '') {
    content.push({ type: 'refusal', refusal: message.refusal });
  }
  if (content.length > 0) output.push(messageItem(content, 'completed'));

  const toolCalls = Array.isArray(message.tool_calls) ? (message.tool_calls as ToolCall[]) : [];
  for (const call of toolCalls) {
    if (!call?.function || typeof call.function.name !== 'string') continue;
    const argumentsText = typeof call.function.arguments === 'string' ? call.function.arguments : '';
    output.push(functionCallItem(String(call.id), call.function.name, argumentsText, context.toolNames, 'completed'));
  }

  const last = output.at(-1);
  if (status === 'incomplete' && last) last.status = 'incomplete';
  const usage = completion.usage ?? context.usage;
  const service = completion.service_tier;
  return {
    ...context.response,
    status,
    completed_at: context.completedAt ?? Math.floor(Date.now() / 1000),
    incomplete_details: incompleteDetails,
    model: completion.model || context.response.model,
    output,
    service_tier: typeof service === 'string' ? service : context.response.service_tier,
    usage: usage ? toResponseUsage(usage) : null,
  };
}
