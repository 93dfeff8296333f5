import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { assembleStream, parseServerSentEvents } from '../../console/src/stream-assembly.js';

/** The console's request detail shows a logged stream as the message it adds up to: checked on recorded streams. */

const fixture = (name: string) => readFileSync(path.join(import.meta.dirname, '..', 'fixtures', name), 'utf8');
function assembled(text: string) {
  const result = assembleStream(text);
  if (!result) throw new Error('not assembled');
  return result;
}
const sse = (payloads: unknown[], done = true) =>
  `${payloads.map((payload) => `data: ${JSON.stringify(payload)}\n\n`).join('')}${done ? 'data: [DONE]\n\n' : ''}`;

describe('assembleStream', () => {
  it('folds an Anthropic Messages stream into the message the non-streamed call returns', () => {
    const assembled = assembleStream(fixture('messages/native-thinking.sse'));
    expect(assembled?.format).toBe('anthropic.message');
    expect(assembled?.incomplete).toBe(false);
    expect(assembled?.message).toEqual(JSON.parse(fixture('messages/native-thinking.json')));
  });

  it('takes the Responses API stream final response as the message', () => {
    const assembled = assembleStream(fixture('responses/native-stream.sse'));
    expect(assembled?.format).toBe('response');
    const message = assembled?.message as { id: string; status: string; output: unknown[] };
    expect(message.id).toBe('resp_68f0native');
    expect(message.status).toBe('completed');
    expect(message.output.length).toBeGreaterThan(0);
  });

  it('joins chat completion chunks: content, reasoning, tool calls by index, finish reason and usage', () => {
    const chunks = fixture('messages/chat-stream-interleaved.chunks.jsonl')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line));
    const assembled = assembleStream(sse(chunks));
    expect(assembled?.format).toBe('chat.completion');
    expect(assembled?.events).toBe(chunks.length);
    const message = assembled?.message as {
      choices: Array<{
        message: { content: string | null; reasoning_content?: string; tool_calls?: unknown[] };
        finish_reason: string;
      }>;
    };
    const expectedContent = chunks.map((chunk) => chunk.choices?.[0]?.delta?.content ?? '').join('');
    const expectedReasoning = chunks.map((chunk) => chunk.choices?.[0]?.delta?.reasoning_content ?? '').join('');
    expect(message.choices[0]?.message.content ?? '').toBe(expectedContent);
    expect(message.choices[0]?.message.reasoning_content ?? '').toBe(expectedReasoning);
    const finishes = chunks.map((chunk) => chunk.choices?.[0]?.finish_reason).filter(Boolean);
    expect(finishes.length).toBeGreaterThan(0);
    expect(message.choices[0]?.finish_reason).toBe(finishes.at(-1));

    const toolStream = sse([
      {
        id: 'c',
        object: 'chat.completion.chunk',
        created: 1,
        model: 'm',
        choices: [
          {
            index: 0,
            delta: {
              role: 'assistant',
              tool_calls: [
                { index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '' } },
              ],
            },
            finish_reason: null,
          },
        ],
      },
      {
        id: 'c',
        object: 'chat.completion.chunk',
        created: 1,
        model: 'm',
        choices: [
          { index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }, finish_reason: null },
        ],
      },
      {
        id: 'c',
        object: 'chat.completion.chunk',
        created: 1,
        model: 'm',
        choices: [
          {
            index: 0,
            delta: { tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] },
            finish_reason: 'tool_calls',
          },
        ],
      },
      {
        id: 'c',
        object: 'chat.completion.chunk',
        created: 1,
        model: 'm',
        choices: [],
        usage: { prompt_tokens: 5, completion_tokens: 7, total_tokens: 12 },
      },
    ]);
    expect(assembleStream(toolStream)?.message).toEqual({
      id: 'c',
      object: 'chat.completion',
      created: 1,
      model: 'm',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: null,
            tool_calls: [
              { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            ],
          },
          finish_reason: 'tool_calls',
        },
      ],
      usage: { prompt_tokens: 5, completion_tokens: 7, total_tokens: 12 },
    });
  });

  it('says when a stream stops before its end, and assembles what came', () => {
    const cut = `${sse([{ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content: 'Hel' }, finish_reason: null }] }], false)}data: {"id":"c","obj`;
    expect(assembled(cut).incomplete).toBe(true);
    expect(
      (assembled(cut).message as { choices: Array<{ message: { content: string } }> }).choices[0]?.message.content,
    ).toBe('Hel');
  });

  it('assembles legacy completions text', () => {
    const stream = sse([
      {
        id: 't',
        object: 'text_completion',
        created: 1,
        model: 'm',
        choices: [{ index: 0, text: 'Once ', finish_reason: null }],
      },
      {
        id: 't',
        object: 'text_completion',
        created: 1,
        model: 'm',
        choices: [{ index: 0, text: 'upon', finish_reason: 'length' }],
      },
    ]);
    expect((assembled(stream).message as { choices: unknown[] }).choices).toEqual([
      { index: 0, text: 'Once upon', finish_reason: 'length' },
    ]);
  });

  it('leaves text that is not a known stream alone', () => {
    expect(assembleStream('plain text, not events')).toBeUndefined();
    expect(assembleStream('data: {"hello":"world"}\n\n')).toBeUndefined();
    expect(parseServerSentEvents(': keepalive\n\nevent: x\r\ndata: a\r\ndata: b\r\n\r\n')).toEqual([
      { event: 'x', data: 'a\nb' },
    ]);
  });
});
