import { toApiError } from '../../../errors/api-error.js';
import { reasoningText } from '../../../openai/reasoning-text.js';
import type { ChatCompletion, Usage } from '../../../openai/types.js';
import { newToolCallId } from '../../../providers/tool-call-id.js';
import { sseDone, sseEvent } from '../../../upstream/sse.js';
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
import { createThinkingFragments, encodeThinking, type ThinkingFragments } from './reasoning-envelope.js';
import type { ToolNameMap } from './tool-names.js';
import type {
  ItemStatus,
  OutputFunctionCall,
  OutputItem,
  OutputMessage,
  OutputReasoning,
  ResponseEvent,
  ResponseObject,
} from './types.js';
import { toResponseUsage } from './usage.js';

/**
 * Chat chunks -> Responses streaming events, one translator per stream (its state lives in this closure), in the
 * order the specification gives, with `sequence_number` counting from 0:
 * - `response.created`, `response.in_progress` (by `start()`, or before the first chunk's events);
 * - reasoning deltas open a `reasoning` item, streamed as a summary part (`response.reasoning_summary_text.delta`:
 *   what the AI SDK and Codex show) when the request asked for a summary; otherwise its `summary` stays `[]` and a
 *   chat upstream's own reasoning text (not Claude's, which comes with its blocks) is a `reasoning_text` content part
 *   (`response.reasoning_text.delta`); with `encryptThinking` the item also gathers the signed thinking fragments
 *   (`thinking_blocks`, Claude's) that come while it is open, given whole in its `encrypted_content` when it closes
 *   (`response.output_item.done`); text deltas a `message` item with an `output_text` part (`content_part.added`,
 *   `output_text.delta`…, `output_text.done`, `content_part.done`); refusal deltas a `refusal` part; each tool call a
 *   `function_call` item (`function_call_arguments.delta`…, `.done`) under its original name and namespace;
 * - a new kind of output closes the open item (`output_item.done`); tool calls of one turn stay open together, since
 *   upstreams may interleave their arguments, and close in order when something else starts or the stream ends;
 * - `finish()`: the open items close, then `response.completed`, or `response.incomplete` when the upstream stopped at
 *   its length limit or a content filter (the last item is then `incomplete` too);
 * - `fail(error)`: an `error` event, then `response.failed` carrying the error, so a broken stream never ends looking
 *   clean.
 */

export interface ResponseStreamTranslator {
  /** `response.created` and `response.in_progress`; empty once started. */
  start(): ResponseEvent[];
  /** The events one chunk produces (starting the stream first if needed). */
  push(chunk: ChatCompletion): ResponseEvent[];
  /** Closes what is open and ends with `response.completed` or `response.incomplete`. */
  finish(fallbackUsage?: Usage): ResponseEvent[];
  /** A failure after the stream started: `error`, then `response.failed`. */
  fail(error: unknown): ResponseEvent[];
  /** The response as it stands; final after finish() or fail() (what the gateway stores). */
  response(): ResponseObject;
}

export interface StreamContext {
  /** The response as created for this request (createResponseObject). */
  response: ResponseObject;
  toolNames: ToolNameMap;
  /** Unix seconds, for `completed_at`. */
  now?: () => number;
  /** Carry signed thinking in the reasoning items' `encrypted_content` (reasoning-envelope.ts). */
  encryptThinking?: boolean;
}

interface OpenMessage {
  kind: 'message';
  item: OutputMessage;
  outputIndex: number;
  part:
    | { type: 'output_text' | 'refusal'; index: number; text: string; logprobs: unknown[]; annotations: unknown[] }
    | undefined;
}

interface OpenReasoning {
  kind: 'reasoning';
  item: OutputReasoning;
  outputIndex: number;
  text: string;
  /**
   * Where the text is shown, once its part was announced: as the summary, or as the model's own `reasoning_text`
   * content (a reasoning item of redacted thinking alone, or unasked-for Claude thinking, has neither).
   */
  shownAs: ReasoningShown | undefined;
  thinking: ThinkingFragments;
}

type ReasoningShown = 'summary' | 'content';

/** The events and part of each way reasoning text is shown. */
const reasoningParts = {
  summary: {
    added: 'response.reasoning_summary_part.added',
    delta: 'response.reasoning_summary_text.delta',
    textDone: 'response.reasoning_summary_text.done',
    partDone: 'response.reasoning_summary_part.done',
    index: 'summary_index',
    part: 'summary_text',
  },
  content: {
    added: 'response.content_part.added',
    delta: 'response.reasoning_text.delta',
    textDone: 'response.reasoning_text.done',
    partDone: 'response.content_part.done',
    index: 'content_index',
    part: 'reasoning_text',
  },
} as const;

/** The item's summary or content, holding the text shown so far. */
function showReasoning(open: OpenReasoning) {
  if (open.shownAs === 'summary') open.item.summary = [{ type: 'summary_text', text: open.text }];
  else if (open.shownAs === 'content') open.item.content = [{ type: 'reasoning_text', text: open.text }];
}

interface OpenCall {
  item: OutputFunctionCall;
  outputIndex: number;
}

interface ChunkToolCall {
  index?: unknown;
  id?: unknown;
  function?: { name?: unknown; arguments?: unknown };
}

const secondsNow = () => Math.floor(Date.now() / 1000);

/**
 * An item as it stands, for an event: items change while they stream, events must not. Parts are copied; their arrays
 * (annotations, logprobs) are only appended to while their part is open, never after it is sent whole. Hand-written:
 * structuredClone was a large part of a short stream's translation (docs/performance.md).
 */
function copyItem(item: OutputItem): OutputItem {
  if (item.type === 'message') return { ...item, content: item.content.map((part) => ({ ...part })) };
  if (item.type === 'reasoning') {
    const copy = { ...item, summary: item.summary.map((part) => ({ ...part })) };
    if (item.content) copy.content = item.content.map((part) => ({ ...part }));
    return copy;
  }
  return { ...item };
}

/** The signed thinking a reasoning item gathered, in its `encrypted_content`. */
function sealThinking(open: OpenReasoning) {
  const blocks = open.thinking.blocks();
  if (blocks.length > 0) open.item.encrypted_content = encodeThinking(blocks);
}

export function createResponseStreamTranslator(context: StreamContext): ResponseStreamTranslator {
  const now = context.now ?? secondsNow;
  const base = context.response;
  const summarized = summarizes(base);
  const output: OutputItem[] = [];
  let sequence = 0;
  let started = false;
  let ended = false;
  let model = base.model;
  let usage: Usage | undefined;
  let finishReason: unknown = null;
  let current: OpenMessage | OpenReasoning | undefined;
  const calls = new Map<number, OpenCall>();
  let final: ResponseObject | undefined;

  const event = (type: string, fields: Record<string, unknown>): ResponseEvent => ({
    type,
    sequence_number: sequence++,
    ...fields,
  });
  const snapshot = (fields: Partial<ResponseObject>): ResponseObject => ({
    ...base,
    model,
    output: output.map(copyItem),
    ...fields,
  });

  const start = (): ResponseEvent[] => {
    if (started) return [];
    started = true;
    const response = snapshot({});
    return [event('response.created', { response }), event('response.in_progress', { response })];
  };

  const addItem = (item: OutputItem, events: ResponseEvent[]): number => {
    const outputIndex = output.length;
    output.push(item);
    events.push(event('response.output_item.added', { output_index: outputIndex, item: copyItem(item) }));
    return outputIndex;
  };

  const closePart = (open: OpenMessage, events: ResponseEvent[]) => {
    const part = open.part;
    if (!part) return;
    open.part = undefined;
    const where = { item_id: open.item.id, output_index: open.outputIndex, content_index: part.index };
    const content =
      part.type === 'output_text'
        ? outputText(part.text, part.annotations, part.logprobs)
        : { type: 'refusal' as const, refusal: part.text };
    open.item.content[part.index] = content;
    if (part.type === 'output_text') {
      events.push(event('response.output_text.done', { ...where, text: part.text, logprobs: part.logprobs }));
    } else {
      events.push(event('response.refusal.done', { ...where, refusal: part.text }));
    }
    events.push(event('response.content_part.done', { ...where, part: { ...content } }));
  };

  const closeCurrent = (status: ItemStatus, events: ResponseEvent[]) => {
    const open = current;
    if (!open) return;
    current = undefined;
    if (open.kind === 'message') {
      closePart(open, events);
      open.item.status = status;
    } else {
      if (open.shownAs) {
        const kind = reasoningParts[open.shownAs];
        const where = { item_id: open.item.id, output_index: open.outputIndex, [kind.index]: 0 };
        const part = { type: kind.part, text: open.text };
        events.push(event(kind.textDone, { ...where, text: open.text }));
        events.push(event(kind.partDone, { ...where, part }));
        showReasoning(open);
      }
      sealThinking(open);
      open.item.status = status;
    }
    events.push(event('response.output_item.done', { output_index: open.outputIndex, item: copyItem(open.item) }));
  };

  const closeCalls = (lastStatus: ItemStatus, events: ResponseEvent[]) => {
    const open = [...calls.values()];
    calls.clear();
    open.forEach((call, position) => {
      const item = call.item;
      item.status = position === open.length - 1 ? lastStatus : 'completed';
      events.push(
        event('response.function_call_arguments.done', {
          item_id: item.id,
          output_index: call.outputIndex,
          arguments: item.arguments,
          name: item.name,
        }),
      );
      events.push(event('response.output_item.done', { output_index: call.outputIndex, item: copyItem(item) }));
    });
  };

  const openReasoning = (events: ResponseEvent[]): OpenReasoning => {
    if (current?.kind === 'reasoning') return current;
    closeCurrent('completed', events);
    closeCalls('completed', events);
    const item = reasoningItem('', 'in_progress');
    const outputIndex = addItem(item, events);
    current = {
      kind: 'reasoning',
      item,
      outputIndex,
      text: '',
      shownAs: undefined,
      thinking: createThinkingFragments(),
    };
    return current;
  };

  /**
   * A piece of reasoning text, shown as the summary or as the model's own `reasoning_text` content (no summary was
   * asked for); undefined: not shown (Claude's thinking unasked for), though its item opens.
   */
  const reasoningDelta = (text: string, shownAs: ReasoningShown | undefined, events: ResponseEvent[]) => {
    const open = openReasoning(events);
    if (!shownAs) return;
    const kind = reasoningParts[open.shownAs ?? shownAs];
    if (!open.shownAs) {
      open.shownAs = shownAs;
      events.push(
        event(kind.added, {
          item_id: open.item.id,
          output_index: open.outputIndex,
          [kind.index]: 0,
          part: { type: kind.part, text: '' },
        }),
      );
    }
    open.text += text;
    events.push({
      type: kind.delta,
      sequence_number: sequence++,
      item_id: open.item.id,
      output_index: open.outputIndex,
      [kind.index]: 0,
      delta: text,
    });
  };

  const messagePart = (type: 'output_text' | 'refusal', events: ResponseEvent[]): NonNullable<OpenMessage['part']> => {
    if (current?.kind !== 'message') {
      closeCurrent('completed', events);
      closeCalls('completed', events);
      const item = messageItem([], 'in_progress');
      current = { kind: 'message', item, outputIndex: addItem(item, events), part: undefined };
    }
    const open = current;
    if (open.part?.type === type) return open.part;
    closePart(open, events);
    const part = { type, index: open.item.content.length, text: '', logprobs: [], annotations: [] };
    const empty = type === 'output_text' ? outputText('') : { type: 'refusal' as const, refusal: '' };
    open.item.content.push(empty);
    open.part = part;
    events.push(
      event('response.content_part.added', {
        item_id: open.item.id,
        output_index: open.outputIndex,
        content_index: part.index,
        part: { ...empty },
      }),
    );
    return part;
  };

  const textDelta = (text: string, logprobs: unknown[], events: ResponseEvent[]) => {
    const part = messagePart('output_text', events);
    part.text += text;
    part.logprobs.push(...logprobs);
    const open = current as OpenMessage;
    // One event per token: a literal, not event()'s spread (the stream's hottest allocation).
    events.push({
      type: 'response.output_text.delta',
      sequence_number: sequence++,
      item_id: open.item.id,
      output_index: open.outputIndex,
      content_index: part.index,
      delta: text,
      logprobs,
    });
  };

  const refusalDelta = (text: string, events: ResponseEvent[]) => {
    const part = messagePart('refusal', events);
    part.text += text;
    const open = current as OpenMessage;
    events.push(
      event('response.refusal.delta', {
        item_id: open.item.id,
        output_index: open.outputIndex,
        content_index: part.index,
        delta: text,
      }),
    );
  };

  const toolCallDelta = (delta: ChunkToolCall, events: ResponseEvent[]) => {
    const index = typeof delta.index === 'number' ? delta.index : 0;
    let call = calls.get(index);
    if (!call) {
      closeCurrent('completed', events);
      const callId = typeof delta.id === 'string' && delta.id !== '' ? delta.id : newToolCallId();
      const name = typeof delta.function?.name === 'string' ? delta.function.name : '';
      const item = functionCallItem(callId, name, '', context.toolNames, 'in_progress');
      call = { item, outputIndex: addItem(item, events) };
      calls.set(index, call);
    }
    const fragment = delta.function?.arguments;
    if (typeof fragment !== 'string' || fragment === '') return;
    call.item.arguments += fragment;
    events.push({
      type: 'response.function_call_arguments.delta',
      sequence_number: sequence++,
      item_id: call.item.id,
      output_index: call.outputIndex,
      delta: fragment,
    });
  };

  const push = (chunk: ChatCompletion): ResponseEvent[] => {
    if (ended) return [];
    const events = start();
    if (typeof chunk.model === 'string' && chunk.model !== '') model = chunk.model;
    if (chunk.usage) usage = chunk.usage;
    const choice = chunk.choices?.[0];
    if (!choice) return events;
    if (choice.finish_reason) finishReason = choice.finish_reason;
    const delta = (choice.delta ?? {}) as Record<string, unknown>;
    const reasoning = reasoningText(delta);
    if (reasoning !== undefined) {
      // Claude's thinking (it comes with its blocks) is a summary, given only when asked for.
      const claudes = Array.isArray(delta.thinking_blocks);
      reasoningDelta(reasoning, summarized ? 'summary' : claudes ? undefined : 'content', events);
    }
    if (context.encryptThinking === true && Array.isArray(delta.thinking_blocks)) {
      const open = openReasoning(events);
      for (const fragment of delta.thinking_blocks) open.thinking.add(fragment);
    }
    if (typeof delta.content === 'string' && delta.content !== '') {
      textDelta(delta.content, logprobsOf(choice.logprobs), events);
    }
    if (Array.isArray(delta.annotations) && current?.kind === 'message' && current.part?.type === 'output_text') {
      current.part.annotations.push(...convertAnnotations(delta.annotations));
    }
    if (typeof delta.refusal === 'string' && delta.refusal !== '') refusalDelta(delta.refusal, events);
    if (Array.isArray(delta.tool_calls)) {
      for (const call of delta.tool_calls as ChunkToolCall[]) toolCallDelta(call, events);
    }
    return events;
  };

  const finish = (fallbackUsage?: Usage): ResponseEvent[] => {
    if (ended) return [];
    const events = start();
    ended = true;
    const { status, incompleteDetails } = mapFinishReason(finishReason);
    // Whatever was open when the upstream stopped is the last item: incomplete when the response is.
    if (calls.size > 0) {
      closeCurrent('completed', events);
      closeCalls(status, events);
    } else {
      closeCurrent(status, events);
    }
    const reported = usage ?? fallbackUsage;
    final = snapshot({
      status,
      completed_at: now(),
      incomplete_details: incompleteDetails,
      usage: reported ? toResponseUsage(reported) : null,
    });
    events.push(event(status === 'completed' ? 'response.completed' : 'response.incomplete', { response: final }));
    return events;
  };

  const fail = (error: unknown): ResponseEvent[] => {
    if (ended) return [];
    const events = start();
    ended = true;
    const apiError = toApiError(error);
    const code = apiError.code ?? (apiError.status >= 500 ? 'server_error' : apiError.type);
    // Items cut off by the failure stay in the response as far as they got, marked incomplete.
    if (current?.kind === 'message' && current.part) {
      const part = current.part;
      current.item.content[part.index] =
        part.type === 'output_text'
          ? outputText(part.text, part.annotations, part.logprobs)
          : { type: 'refusal', refusal: part.text };
    } else if (current?.kind === 'reasoning') {
      showReasoning(current);
      sealThinking(current);
    }
    if (current) current.item.status = 'incomplete';
    for (const call of calls.values()) call.item.status = 'incomplete';
    events.push(event('error', { code, message: apiError.message, param: apiError.param }));
    final = snapshot({
      status: 'failed',
      error: { code, message: apiError.message },
      usage: usage ? toResponseUsage(usage) : null,
    });
    events.push(event('response.failed', { response: final }));
    return events;
  };

  return {
    start,
    push,
    finish,
    fail,
    response: () => final ?? snapshot({}),
  };
}

/**
 * The JSON of a delta event, written out rather than serialized: there is one per token, and the template is several
 * times cheaper than JSON.stringify of the same object (docs/performance.md). Undefined for any other event.
 */
function deltaJson(responseEvent: ResponseEvent): string | undefined {
  const { type, sequence_number: sequence, item_id: itemId, output_index: outputIndex, delta } = responseEvent;
  if (typeof itemId !== 'string' || typeof outputIndex !== 'number' || typeof delta !== 'string') return undefined;
  const head = `{"type":"${type}","sequence_number":${sequence},"item_id":${JSON.stringify(itemId)},"output_index":${outputIndex}`;
  switch (type) {
    case 'response.output_text.delta': {
      const logprobs = responseEvent.logprobs;
      const logprobsJson = Array.isArray(logprobs) && logprobs.length === 0 ? '[]' : JSON.stringify(logprobs);
      return `${head},"content_index":${responseEvent.content_index},"delta":${JSON.stringify(delta)},"logprobs":${logprobsJson}}`;
    }
    case 'response.reasoning_summary_text.delta':
      return `${head},"summary_index":${responseEvent.summary_index},"delta":${JSON.stringify(delta)}}`;
    case 'response.reasoning_text.delta':
      return `${head},"content_index":${responseEvent.content_index},"delta":${JSON.stringify(delta)}}`;
    case 'response.function_call_arguments.delta':
      return `${head},"delta":${JSON.stringify(delta)}}`;
    default:
      return undefined;
  }
}

/** One event as SSE: its `event:` line equal to its type, then its JSON; one string, to be written whole. */
export function formatEvent(responseEvent: ResponseEvent): string {
  return sseEvent(responseEvent.type, deltaJson(responseEvent) ?? JSON.stringify(responseEvent));
}

/**
 * Events in one string (each whole), for one write per chunk. `response.created` and `response.in_progress` carry the
 * same response object: it is serialized once (it echoes the request's tools, often tens of kilobytes).
 */
export function formatEvents(events: readonly ResponseEvent[]): string {
  let text = '';
  let lastResponse: unknown;
  let lastJson = '';
  for (const responseEvent of events) {
    const response = responseEvent.response;
    if (response === undefined || Object.keys(responseEvent).length !== 3) {
      text += formatEvent(responseEvent);
      continue;
    }
    if (response !== lastResponse) {
      lastResponse = response;
      lastJson = JSON.stringify(response);
    }
    const json = `{"type":${JSON.stringify(responseEvent.type)},"sequence_number":${responseEvent.sequence_number},"response":${lastJson}}`;
    text += sseEvent(responseEvent.type, json);
  }
  return text;
}

/** The end of a Responses stream: the specification's terminal `[DONE]`, which the SDKs skip. */
export const streamEnd = sseDone;
