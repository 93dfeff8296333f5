import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createMessagesStreamTranslator } from '../../src/api/v1/messages/stream-events.js';
import { apiError } from '../../src/errors/api-error.js';
import type { ChatCompletion } from '../../src/openai/types.js';
import { accumulate, parseEvents } from '../support/anthropic-events.js';
import { messagesFixture, messagesFixtureText } from '../support/messages-fixtures.js';

const chunk = (delta: Record<string, unknown>, finish: string | null = null): ChatCompletion => ({
  id: 'c',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'up',
  choices: [{ index: 0, delta, finish_reason: finish }],
});

function run(chunks: ChatCompletion[], options = {}): string[] {
  const translator = createMessagesStreamTranslator({ model: 'public', messageId: 'msg_fixture', ...options });
  return [...chunks.flatMap((item) => translator.push(item)), ...translator.finish()];
}

describe('chat chunks -> Anthropic stream events', () => {
  it('opens a new block for each kind of content and sends interleaved tool calls whole, in order', () => {
    const chunks = messagesFixtureText('chat-stream-interleaved.chunks.jsonl')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as ChatCompletion);
    const events = run(chunks, { estimatedInputTokens: 42 });
    // One string per event, framed as Anthropic frames them.
    for (const text of events) expect(text).toMatch(/^event: [a-z_]+\ndata: \{.*\}\n\n$/s);
    const parsed = parseEvents(events.join(''));
    expect(parsed.map((event) => [event.event, event.data])).toEqual(
      messagesFixture('chat-stream-interleaved.events.json'),
    );
    expect(accumulate(parsed).content.map((block) => block.type)).toEqual([
      'thinking',
      'text',
      'thinking',
      'text',
      'tool_use',
      'tool_use',
      'tool_use',
    ]);
  });

  it('follows the event grammar whatever the upstream interleaves, and loses or duplicates nothing', () => {
    const operation = fc.oneof(
      fc.record({ kind: fc.constant('reasoning' as const), text: fc.string({ minLength: 1, maxLength: 5 }) }),
      fc.record({ kind: fc.constant('content' as const), text: fc.string({ minLength: 1, maxLength: 5 }) }),
      fc.record({
        kind: fc.constant('tool' as const),
        index: fc.integer({ min: 0, max: 2 }),
        value: fc.dictionary(fc.string({ maxLength: 3 }), fc.integer(), { maxKeys: 2 }),
        pieces: fc.integer({ min: 1, max: 4 }),
      }),
    );
    fc.assert(
      fc.property(fc.array(operation, { maxLength: 12 }), (operations) => {
        const chunks: ChatCompletion[] = [];
        const tools = new Map<number, Record<string, unknown>>();
        let reasoning = '';
        let text = '';
        for (const step of operations) {
          if (step.kind === 'reasoning') {
            reasoning += step.text;
            chunks.push(chunk({ reasoning_content: step.text }));
          } else if (step.kind === 'content') {
            text += step.text;
            chunks.push(chunk({ content: step.text }));
          } else if (!tools.has(step.index)) {
            // A call streams its arguments in pieces, which may interleave with other calls' pieces.
            tools.set(step.index, step.value);
            const json = JSON.stringify(step.value);
            const size = Math.ceil(json.length / step.pieces);
            for (let at = 0; at < json.length; at += size) {
              const first = at === 0;
              chunks.push(
                chunk({
                  tool_calls: [
                    {
                      index: step.index,
                      ...(first ? { id: `call_${step.index}`, type: 'function' } : {}),
                      function: {
                        ...(first ? { name: `tool${step.index}` } : {}),
                        arguments: json.slice(at, at + size),
                      },
                    },
                  ],
                }),
              );
            }
          }
        }
        chunks.push(chunk({}, tools.size > 0 ? 'tool_calls' : 'stop'));
        const message = accumulate(parseEvents(run(chunks).join('')));
        const joined = (type: string) =>
          message.content
            .filter((block) => block.type === type)
            .map((block) => (block.type === 'text' ? block.text : block.type === 'thinking' ? block.thinking : ''))
            .join('');
        expect(joined('thinking')).toBe(reasoning);
        expect(joined('text')).toBe(text);
        const uses = message.content.filter((block) => block.type === 'tool_use');
        expect(uses).toEqual(
          [...tools.keys()]
            .sort((a, b) => a - b)
            .map((index) => ({ type: 'tool_use', id: `call_${index}`, name: `tool${index}`, input: tools.get(index) })),
        );
        expect(message.stopReason).toBe(tools.size > 0 ? 'tool_use' : 'end_turn');
      }),
    );
  });

  it('ends a stream with no content properly, and reports the fallback usage when the upstream gave none', () => {
    const translator = createMessagesStreamTranslator({ model: 'public', stopSequences: ['END'] });
    const events = parseEvents(
      [
        ...translator.push({
          ...chunk({}, 'stop'),
          choices: [{ index: 0, delta: {}, finish_reason: 'stop', stop_reason: 'END' }],
        }),
        ...translator.finish({ prompt_tokens: 12, completion_tokens: 0, total_tokens: 12 }),
      ].join(''),
    );
    const message = accumulate(events);
    expect(message.start).toMatchObject({ model: 'up', content: [], stop_reason: null });
    expect(message.start.id).toMatch(/^msg_/);
    expect(message.content).toEqual([]);
    expect([message.stopReason, message.stopSequence]).toEqual(['stop_sequence', 'END']);
    expect(message.usage).toEqual({
      input_tokens: 12,
      output_tokens: 0,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    });
    // Nothing more once finished.
    expect(translator.finish()).toEqual([]);
    expect(translator.push(chunk({ content: 'late' }))).toEqual([]);
  });

  it('reports a refusal as text with stop_reason refusal', () => {
    const message = accumulate(parseEvents(run([chunk({ refusal: 'No.' }), chunk({}, 'stop')]).join('')));
    expect(message.content).toEqual([{ type: 'text', text: 'No.' }]);
    expect(message.stopReason).toBe('refusal');
  });

  it('writes ping and error events in Anthropic’s framing', () => {
    const translator = createMessagesStreamTranslator({ model: 'public' });
    expect(translator.ping()).toBe('event: ping\ndata: {"type":"ping"}\n\n');
    const failure = translator.fail(apiError('upstream_overloaded', 'busy'));
    expect(failure).toBe(
      'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"busy"}}\n\n',
    );
    expect(translator.push(chunk({ content: 'after the error' }))).toEqual([]);
  });
});
