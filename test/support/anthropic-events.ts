import { parseStrictSse } from './sse.js';

/**
 * Reading Anthropic stream events back, as the Anthropic SDK's MessageStream accumulates them, with the checks its
 * callers (Claude Code) rely on made strict: events in order, one block open at a time, indexes in sequence, every
 * delta of the kind its block is (a thinking delta in a text block is an error), tool input that parses.
 */

export interface ParsedEvent {
  event: string | undefined;
  // biome-ignore lint/suspicious/noExplicitAny: event payloads are arbitrary JSON that tests walk freely
  data: any;
}

/** The events of an Anthropic stream, its raw framing checked strictly (test/support/sse.ts). */
export function parseEvents(text: string): ParsedEvent[] {
  return parseStrictSse(text, { surface: 'messages' }).frames.map((frame) => ({
    event: frame.event,
    data: JSON.parse(frame.data),
  }));
}

export type AccumulatedBlock =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'tool_use'; id: string; name: string; input: unknown };

export interface AccumulatedMessage {
  // biome-ignore lint/suspicious/noExplicitAny: the message_start payload as sent
  start: any;
  content: AccumulatedBlock[];
  stopReason: string | null;
  stopSequence: string | null;
  // biome-ignore lint/suspicious/noExplicitAny: the message_delta usage as sent
  usage: any;
}

const deltaKinds: Record<string, string[]> = {
  text: ['text_delta', 'citations_delta'],
  thinking: ['thinking_delta', 'signature_delta'],
  tool_use: ['input_json_delta'],
};

export function accumulate(events: ParsedEvent[]): AccumulatedMessage {
  const fail = (why: string, at: number): never => {
    throw new Error(`event ${at} (${events[at]?.event}): ${why}`);
  };
  if (events[0]?.event !== 'message_start') fail('the stream must open with message_start', 0);
  const message: AccumulatedMessage = {
    start: events[0]?.data.message,
    content: [],
    stopReason: null,
    stopSequence: null,
    usage: undefined,
  };
  const json: string[] = [];
  let open: number | undefined;
  let stopped = false;
  events.forEach(({ event, data }, at) => {
    if (event !== data.type) fail(`event name ${event} but data.type ${data.type}`, at);
    if (stopped) fail('event after message_stop', at);
    switch (event) {
      case 'message_start':
        if (at !== 0) fail('a second message_start', at);
        return;
      case 'ping':
        return;
      case 'content_block_start': {
        if (open !== undefined) fail(`block ${open} is still open`, at);
        if (data.index !== message.content.length) fail(`expected index ${message.content.length}`, at);
        open = data.index;
        message.content.push({ ...data.content_block });
        json.push('');
        return;
      }
      case 'content_block_delta': {
        if (open === undefined || data.index !== open) fail(`delta for block ${data.index}, open: ${open}`, at);
        const block = message.content[data.index] as AccumulatedBlock;
        if (!deltaKinds[block.type]?.includes(data.delta.type)) {
          fail(`a ${data.delta.type} in a ${block.type} block`, at);
        }
        if (block.type === 'text') block.text += data.delta.text;
        else if (block.type === 'thinking' && data.delta.type === 'thinking_delta')
          block.thinking += data.delta.thinking;
        else if (block.type === 'thinking') block.signature = data.delta.signature;
        else json[data.index] += data.delta.partial_json;
        return;
      }
      case 'content_block_stop': {
        if (open === undefined || data.index !== open) fail(`stop for block ${data.index}, open: ${open}`, at);
        const block = message.content[data.index] as AccumulatedBlock;
        if (block.type === 'tool_use' && json[data.index] !== '') {
          block.input = JSON.parse(json[data.index] as string);
          if (block.input === null || typeof block.input !== 'object' || Array.isArray(block.input)) {
            fail('tool input is not an object', at);
          }
        }
        open = undefined;
        return;
      }
      case 'message_delta':
        if (open !== undefined) fail(`message_delta with block ${open} open`, at);
        message.stopReason = data.delta.stop_reason;
        message.stopSequence = data.delta.stop_sequence;
        message.usage = data.usage;
        return;
      case 'message_stop':
        if (message.stopReason === null) fail('message_stop before message_delta', at);
        stopped = true;
        return;
      default:
        fail('unknown event', at);
    }
  });
  if (!stopped) throw new Error('the stream did not end with message_stop');
  return message;
}
