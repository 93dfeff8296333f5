/**
 * A streamed response as the message it added up to. The log keeps a streamed body as the server-sent events the
 * client received; reading a few hundred `data:` chunks to find what the model said is no way to inspect a request.
 * This folds the events back into the one JSON document a non-streamed call would have returned: OpenAI chat
 * completions and legacy completions chunks, Anthropic Messages events, and Responses API events.
 */

export interface AssembledStream {
  /** Which wire format the events were in. */
  format: 'chat.completion' | 'text_completion' | 'anthropic.message' | 'response';
  /** The message, in the non-streamed response's shape. */
  message: unknown;
  /** Events counted (data lines with JSON). */
  events: number;
  /** The stream stops before its end event (the client went away, or the log kept only the first part). */
  incomplete: boolean;
}

interface ServerSentEvent {
  event: string | undefined;
  data: string;
}

/** Splits SSE text into events (blank-line separated; `data:` lines joined, comments skipped). */
export function parseServerSentEvents(text: string): ServerSentEvent[] {
  const events: ServerSentEvent[] = [];
  for (const block of text.replace(/\r\n?/g, '\n').split('\n\n')) {
    let event: string | undefined;
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
    }
    if (data.length > 0) events.push({ event, data: data.join('\n') });
  }
  return events;
}

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const text = (value: unknown) => (typeof value === 'string' ? value : '');

/** The assembled message, or undefined when the text is not a stream in a known format. */
export function assembleStream(body: string): AssembledStream | undefined {
  const events = parseServerSentEvents(body);
  const payloads: Json[] = [];
  let done = false;
  for (const event of events) {
    if (event.data.trim() === '[DONE]') {
      done = true;
      continue;
    }
    try {
      const parsed = JSON.parse(event.data) as unknown;
      if (isObject(parsed)) payloads.push(parsed);
    } catch {
      // a cut-off last event: what came before still assembles
    }
  }
  const first = payloads[0];
  if (!first) return undefined;
  if (first.object === 'chat.completion.chunk') return assembleChat(payloads, done);
  if (first.object === 'text_completion') return assembleTextCompletion(payloads, done);
  if (typeof first.type === 'string' && first.type.startsWith('response.')) return assembleResponse(payloads);
  if (first.type === 'message_start') return assembleAnthropic(payloads);
  return undefined;
}

interface ToolCall {
  id: string;
  type: string;
  function: { name: string; arguments: string };
}

function assembleChat(payloads: Json[], done: boolean): AssembledStream {
  const choices = new Map<
    number,
    {
      role: string;
      content: string;
      reasoning: string;
      refusal: string;
      toolCalls: Map<number, ToolCall>;
      finish: unknown;
    }
  >();
  let usage: unknown;
  for (const chunk of payloads) {
    if (isObject(chunk.usage)) usage = chunk.usage;
    for (const choice of Array.isArray(chunk.choices) ? chunk.choices : []) {
      if (!isObject(choice)) continue;
      const index = typeof choice.index === 'number' ? choice.index : 0;
      let state = choices.get(index);
      if (!state) {
        state = { role: 'assistant', content: '', reasoning: '', refusal: '', toolCalls: new Map(), finish: null };
        choices.set(index, state);
      }
      const delta = isObject(choice.delta) ? choice.delta : {};
      if (typeof delta.role === 'string') state.role = delta.role;
      state.content += text(delta.content);
      // DeepSeek, Qwen and vLLM stream their reasoning beside the content under one of these names.
      state.reasoning += text(delta.reasoning_content) || text(delta.reasoning);
      state.refusal += text(delta.refusal);
      for (const call of Array.isArray(delta.tool_calls) ? delta.tool_calls : []) {
        if (!isObject(call)) continue;
        const callIndex = typeof call.index === 'number' ? call.index : state.toolCalls.size;
        const existing = state.toolCalls.get(callIndex) ?? {
          id: '',
          type: 'function',
          function: { name: '', arguments: '' },
        };
        if (typeof call.id === 'string') existing.id = call.id;
        if (typeof call.type === 'string') existing.type = call.type;
        const fn = isObject(call.function) ? call.function : {};
        existing.function.name += text(fn.name);
        existing.function.arguments += text(fn.arguments);
        state.toolCalls.set(callIndex, existing);
      }
      if (choice.finish_reason !== undefined && choice.finish_reason !== null) state.finish = choice.finish_reason;
    }
  }
  const head = payloads[0] ?? {};
  const message = {
    id: head.id,
    object: 'chat.completion',
    created: head.created,
    model: head.model,
    choices: [...choices.entries()]
      .sort(([a], [b]) => a - b)
      .map(([index, state]) => ({
        index,
        message: {
          role: state.role,
          content: state.content || (state.toolCalls.size > 0 ? null : ''),
          ...(state.reasoning ? { reasoning_content: state.reasoning } : {}),
          ...(state.refusal ? { refusal: state.refusal } : {}),
          ...(state.toolCalls.size > 0
            ? { tool_calls: [...state.toolCalls.entries()].sort(([a], [b]) => a - b).map(([, call]) => call) }
            : {}),
        },
        finish_reason: state.finish,
      })),
    ...(usage ? { usage } : {}),
  };
  const finished = [...choices.values()].every((state) => state.finish !== null);
  return { format: 'chat.completion', message, events: payloads.length, incomplete: !done && !finished };
}

function assembleTextCompletion(payloads: Json[], done: boolean): AssembledStream {
  const choices = new Map<number, { text: string; finish: unknown }>();
  let usage: unknown;
  for (const chunk of payloads) {
    if (isObject(chunk.usage)) usage = chunk.usage;
    for (const choice of Array.isArray(chunk.choices) ? chunk.choices : []) {
      if (!isObject(choice)) continue;
      const index = typeof choice.index === 'number' ? choice.index : 0;
      const state = choices.get(index) ?? { text: '', finish: null };
      state.text += text(choice.text);
      if (choice.finish_reason !== undefined && choice.finish_reason !== null) state.finish = choice.finish_reason;
      choices.set(index, state);
    }
  }
  const head = payloads[0] ?? {};
  const message = {
    id: head.id,
    object: 'text_completion',
    created: head.created,
    model: head.model,
    choices: [...choices.entries()]
      .sort(([a], [b]) => a - b)
      .map(([index, state]) => ({ index, text: state.text, finish_reason: state.finish })),
    ...(usage ? { usage } : {}),
  };
  return { format: 'text_completion', message, events: payloads.length, incomplete: !done };
}

function assembleAnthropic(payloads: Json[]): AssembledStream {
  const start = payloads[0]?.message;
  const message: Json = isObject(start) ? { ...start } : { type: 'message' };
  const blocks: Json[] = [];
  const partialJson = new Map<number, string>();
  let stopped = false;
  for (const event of payloads) {
    const index = typeof event.index === 'number' ? event.index : 0;
    if (event.type === 'content_block_start' && isObject(event.content_block)) {
      blocks[index] = { ...event.content_block };
    } else if (event.type === 'content_block_delta' && isObject(event.delta)) {
      const block = blocks[index] ?? { type: 'text', text: '' };
      const delta = event.delta;
      if (delta.type === 'text_delta') block.text = text(block.text) + text(delta.text);
      else if (delta.type === 'thinking_delta') block.thinking = text(block.thinking) + text(delta.thinking);
      else if (delta.type === 'signature_delta') block.signature = text(block.signature) + text(delta.signature);
      else if (delta.type === 'input_json_delta') {
        partialJson.set(index, (partialJson.get(index) ?? '') + text(delta.partial_json));
      }
      blocks[index] = block;
    } else if (event.type === 'content_block_stop') {
      const json = partialJson.get(index);
      const block = blocks[index];
      if (json !== undefined && block) {
        try {
          block.input = JSON.parse(json || '{}');
        } catch {
          block.input = json;
        }
      }
    } else if (event.type === 'message_delta') {
      if (isObject(event.delta)) Object.assign(message, event.delta);
      if (isObject(event.usage)) message.usage = { ...(isObject(message.usage) ? message.usage : {}), ...event.usage };
    } else if (event.type === 'message_stop') {
      stopped = true;
    } else if (event.type === 'error') {
      message.error = event.error;
    }
  }
  message.content = blocks.filter(Boolean);
  return { format: 'anthropic.message', message, events: payloads.length, incomplete: !stopped };
}

function assembleResponse(payloads: Json[]): AssembledStream {
  // The last event that carries the whole response (completed, failed or incomplete) is the message itself.
  const final = [...payloads]
    .reverse()
    .find(
      (event) =>
        (event.type === 'response.completed' ||
          event.type === 'response.failed' ||
          event.type === 'response.incomplete') &&
        isObject(event.response),
    );
  if (final) return { format: 'response', message: final.response, events: payloads.length, incomplete: false };
  const created = payloads.find((event) => isObject(event.response))?.response;
  const outputText = payloads
    .filter((event) => event.type === 'response.output_text.delta')
    .map((event) => text(event.delta))
    .join('');
  return {
    format: 'response',
    message: { ...(isObject(created) ? created : {}), output_text: outputText },
    events: payloads.length,
    incomplete: true,
  };
}
