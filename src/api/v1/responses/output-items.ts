import { newItemId } from './ids.js';
import type { ToolNameMap } from './tool-names.js';
import type {
  ItemStatus,
  OutputFunctionCall,
  OutputMessage,
  OutputReasoning,
  OutputText,
  ResponseObject,
} from './types.js';

/** Output items built from chat pieces; shared by the whole-answer translation and the stream translator. */

/**
 * Whether reasoning text goes into the reasoning items' summary: only when the request asked for a summary (echoed in
 * the response), as OpenAI answers; otherwise a reasoning item has `summary: []` (and its `encrypted_content`).
 */
export function summarizes(response: Pick<ResponseObject, 'reasoning'>): boolean {
  return typeof response.reasoning?.summary === 'string';
}

export function reasoningItem(text: string, status: ItemStatus, id = newItemId('rs')): OutputReasoning {
  return { id, type: 'reasoning', status, summary: text === '' ? [] : [{ type: 'summary_text', text }] };
}

export function outputText(text: string, annotations: unknown[] = [], logprobs: unknown[] = []): OutputText {
  return { type: 'output_text', text, annotations, logprobs };
}

export function messageItem(
  content: OutputMessage['content'],
  status: ItemStatus,
  id = newItemId('msg'),
): OutputMessage {
  return { id, type: 'message', status, role: 'assistant', content };
}

/** A chat tool call as a function_call item, under the function's own name and namespace. */
export function functionCallItem(
  callId: string,
  chatName: string,
  argumentsText: string,
  names: ToolNameMap,
  status: ItemStatus,
  id = newItemId('fc'),
): OutputFunctionCall {
  const tool = names.fromChat(chatName);
  const item: OutputFunctionCall = {
    id,
    type: 'function_call',
    status,
    arguments: argumentsText,
    call_id: callId,
    name: tool.name,
  };
  if (tool.namespace !== undefined) item.namespace = tool.namespace;
  return item;
}

/** Chat annotations (`{type: "url_citation", url_citation: {…}}`) in the Responses shape (the fields flattened). */
export function convertAnnotations(annotations: unknown): unknown[] {
  if (!Array.isArray(annotations)) return [];
  return annotations.map((annotation) => {
    if (!annotation || typeof annotation !== 'object') return annotation;
    const { type, url_citation: citation } = annotation as { type?: unknown; url_citation?: unknown };
    if (type === 'url_citation' && citation && typeof citation === 'object') return { type, ...citation };
    return annotation;
  });
}

/** The per-token logprobs of a chat choice (`logprobs.content`); they have the same shape in Responses. */
export function logprobsOf(logprobs: unknown): unknown[] {
  const content = (logprobs as { content?: unknown } | null | undefined)?.content;
  return Array.isArray(content) ? content : [];
}
