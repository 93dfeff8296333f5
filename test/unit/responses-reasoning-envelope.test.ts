import { describe, expect, it } from 'vitest';
import { fromChatCompletion } from '../../src/api/v1/responses/from-chat-completion.js';
import {
  createThinkingFragments,
  decodeThinking,
  encodeThinking,
  encryptsThinking,
  type ThinkingBlock,
} from '../../src/api/v1/responses/reasoning-envelope.js';
import { createResponseObject } from '../../src/api/v1/responses/response-object.js';
import { createResponseStreamTranslator } from '../../src/api/v1/responses/stream-events.js';
import { toChatRequest } from '../../src/api/v1/responses/to-chat-request.js';
import { createToolNameMap } from '../../src/api/v1/responses/tool-names.js';
import type { InputItem, OutputReasoning, ResponseEvent } from '../../src/api/v1/responses/types.js';
import { validateResponsesRequest } from '../../src/api/v1/responses/validate-request.js';
import type { ChatCompletion } from '../../src/openai/types.js';

/**
 * Claude's signed thinking through the Responses translation: a chat answer's `thinking_blocks` become a reasoning
 * item's `encrypted_content` (an envelope the gateway can read back), and a reasoning item carrying one becomes
 * `thinking_blocks` again on the assistant message of its turn. Other vendors' `encrypted_content` is left out.
 */

const blocks: ThinkingBlock[] = [
  { type: 'thinking', thinking: 'I should call the tool, "quoted" \u00e9.', signature: 'c2lnbmF0dXJl+/=' },
  { type: 'redacted_thinking', data: 'EmwKAhgBEgyRedacted' },
];

const toolNames = createToolNameMap([]);
// Reasoning text is shown only when the request asks for a summary (Codex sends `summary: "auto"`).
const base = (summary: string | null = 'auto') =>
  createResponseObject(validateResponsesRequest({ model: 'm', input: 'hi', reasoning: { summary } }), {
    id: 'resp_1',
    createdAt: 1760000000,
    model: 'm',
  });

describe('the thinking envelope', () => {
  it('round-trips the blocks exactly, as one URL-safe string', () => {
    const envelope = encodeThinking(blocks);
    expect(envelope).toMatch(/^sb-thinking-v1\.[A-Za-z0-9_-]+$/);
    expect(decodeThinking(envelope)).toEqual(blocks);
  });

  it("reads anything else as not the gateway's: OpenAI's blobs, damaged or empty envelopes", () => {
    const envelope = encodeThinking(blocks);
    for (const other of [
      'gAAAAABo-opaque-openai-content',
      undefined,
      null,
      42,
      '',
      'sb-thinking-v1.',
      'sb-thinking-v1.!!!',
      envelope.slice(0, -7),
      `sb-thinking-v1.${Buffer.from('{"blocks":[]}').toString('base64url')}`,
      `sb-thinking-v1.${Buffer.from('{"blocks":[{"type":"thinking","thinking":"x"}]}').toString('base64url')}`,
      `sb-thinking-v1.${Buffer.from('[1,2]').toString('base64url')}`,
    ]) {
      expect(decodeThinking(other)).toBeUndefined();
    }
  });

  it('is carried when the client includes it, or when the response is stored', () => {
    expect(encryptsThinking(['reasoning.encrypted_content'], false)).toBe(true);
    expect(encryptsThinking(undefined, true)).toBe(true);
    expect(encryptsThinking(['message.output_text.logprobs'], false)).toBe(false);
    expect(encryptsThinking(null, false)).toBe(false);
  });

  it('joins stream fragments by index, leaving out thinking that was never signed', () => {
    const fragments = createThinkingFragments();
    fragments.add({ type: 'thinking', thinking: 'I should ', index: 0 });
    fragments.add({ type: 'thinking', thinking: 'call the tool, "quoted" \u00e9.', index: 0 });
    fragments.add({ type: 'thinking', thinking: '', signature: 'c2lnbmF0dXJl+/=', index: 0 });
    fragments.add({ type: 'redacted_thinking', data: 'EmwKAhgBEgyRedacted', index: 1 });
    fragments.add({ type: 'thinking', thinking: 'unsigned', index: 2 });
    expect(fragments.blocks()).toEqual(blocks);
  });
});

describe('signed thinking in the answer', () => {
  const completion = {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1760000000,
    model: 'claude',
    choices: [
      {
        index: 0,
        finish_reason: 'tool_calls',
        message: {
          role: 'assistant',
          content: null,
          reasoning_content: blocks[0]?.type === 'thinking' ? blocks[0].thinking : '',
          thinking_blocks: blocks,
          tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'f', arguments: '{}' } }],
        },
      },
    ],
  } as unknown as ChatCompletion;

  it('is a reasoning item with the thinking as its summary and the blocks in encrypted_content', () => {
    const response = fromChatCompletion(completion, { response: base(), toolNames, encryptThinking: true });
    const reasoning = response.output[0] as OutputReasoning;
    expect(reasoning).toMatchObject({
      type: 'reasoning',
      status: 'completed',
      summary: [{ type: 'summary_text', text: 'I should call the tool, "quoted" \u00e9.' }],
    });
    expect(decodeThinking(reasoning.encrypted_content)).toEqual(blocks);
    expect(response.output[1]).toMatchObject({ type: 'function_call', call_id: 'toolu_1' });
  });

  it('has no encrypted_content unless asked for', () => {
    const response = fromChatCompletion(completion, { response: base(), toolNames });
    expect(response.output[0]).not.toHaveProperty('encrypted_content');
  });

  const chunk = (delta: Record<string, unknown>, finish: string | null = null): ChatCompletion =>
    ({
      id: 'chatcmpl-1',
      object: 'chat.completion.chunk',
      created: 1760000000,
      model: 'claude',
      choices: [{ index: 0, delta, finish_reason: finish }],
    }) as unknown as ChatCompletion;

  const streamed = [
    chunk({ reasoning_content: 'I should ', thinking_blocks: [{ type: 'thinking', thinking: 'I should ', index: 0 }] }),
    chunk({
      reasoning_content: 'call the tool, "quoted" \u00e9.',
      thinking_blocks: [{ type: 'thinking', thinking: 'call the tool, "quoted" \u00e9.', index: 0 }],
    }),
    chunk({ thinking_blocks: [{ type: 'thinking', thinking: '', signature: 'c2lnbmF0dXJl+/=', index: 0 }] }),
    chunk({ thinking_blocks: [{ type: 'redacted_thinking', data: 'EmwKAhgBEgyRedacted', index: 1 }] }),
    chunk({ tool_calls: [{ index: 0, id: 'toolu_1', type: 'function', function: { name: 'f', arguments: '{}' } }] }),
    chunk({}, 'tool_calls'),
  ];

  function run(encryptThinking: boolean, summary: string | null = 'auto'): ResponseEvent[] {
    const translator = createResponseStreamTranslator({ response: base(summary), toolNames, encryptThinking });
    const events = translator.start();
    for (const piece of streamed) events.push(...translator.push(piece));
    events.push(...translator.finish());
    return events;
  }

  it('streams as the summary events, then output_item.done with the blocks in encrypted_content', () => {
    const events = run(true);
    const reasoningEvents = events.filter((event) => event.output_index === 0).map((event) => event.type);
    expect(reasoningEvents).toEqual([
      'response.output_item.added',
      'response.reasoning_summary_part.added',
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.done',
      'response.reasoning_summary_part.done',
      'response.output_item.done',
    ]);
    const added = events.find((event) => event.type === 'response.output_item.added')?.item as OutputReasoning;
    expect(added).not.toHaveProperty('encrypted_content');
    const done = events.find((event) => event.type === 'response.output_item.done')?.item as OutputReasoning;
    expect(done.summary).toEqual([{ type: 'summary_text', text: 'I should call the tool, "quoted" \u00e9.' }]);
    expect(decodeThinking(done.encrypted_content)).toEqual(blocks);
    const completed = events.at(-1)?.response as { output: OutputReasoning[] };
    expect(decodeThinking(completed.output[0]?.encrypted_content)).toEqual(blocks);
  });

  it('keeps the blocks in encrypted_content without a summary, which is then empty (JSON and stream)', () => {
    const whole = fromChatCompletion(completion, { response: base(null), toolNames, encryptThinking: true });
    expect(whole.output[0]).toMatchObject({ type: 'reasoning', summary: [] });
    expect(decodeThinking((whole.output[0] as OutputReasoning).encrypted_content)).toEqual(blocks);
    const events = run(true, null);
    expect(events.some((event) => event.type.startsWith('response.reasoning_summary'))).toBe(false);
    const done = events.find((event) => event.type === 'response.output_item.done')?.item as OutputReasoning;
    expect(done.summary).toEqual([]);
    expect(decodeThinking(done.encrypted_content)).toEqual(blocks);
  });

  it('streams without encrypted_content unless asked for', () => {
    const done = run(false).find((event) => event.type === 'response.output_item.done')?.item;
    expect(done).not.toHaveProperty('encrypted_content');
  });

  it('gives redacted thinking alone a reasoning item without a summary', () => {
    const translator = createResponseStreamTranslator({ response: base(), toolNames, encryptThinking: true });
    const events = translator.push(chunk({ thinking_blocks: [{ type: 'redacted_thinking', data: 'xyz', index: 0 }] }));
    events.push(...translator.push(chunk({ content: 'Hi' })), ...translator.finish());
    const done = events.find((event) => event.type === 'response.output_item.done')?.item as OutputReasoning;
    expect(done.summary).toEqual([]);
    expect(decodeThinking(done.encrypted_content)).toEqual([{ type: 'redacted_thinking', data: 'xyz' }]);
    expect(events.some((event) => event.type.startsWith('response.reasoning_summary'))).toBe(false);
  });
});

describe('signed thinking sent back', () => {
  const envelope = encodeThinking(blocks);
  const input: InputItem[] = [
    { role: 'user', content: 'Weather?' },
    {
      type: 'reasoning',
      id: 'rs_1',
      summary: [{ type: 'summary_text', text: 'thinking' }],
      encrypted_content: envelope,
    },
    { type: 'function_call', call_id: 'toolu_1', name: 'get_weather', arguments: '{}' },
    { type: 'function_call_output', call_id: 'toolu_1', output: '18 C' },
  ];

  it('becomes the thinking_blocks of the assistant message of its turn (its text the reasoning_content)', () => {
    const { request, dropped } = toChatRequest(validateResponsesRequest({ model: 'm', input }), []);
    expect(request.messages).toEqual([
      { role: 'user', content: 'Weather?' },
      {
        role: 'assistant',
        content: null,
        thinking_blocks: blocks,
        reasoning_content: blocks.flatMap((block) => (block.type === 'thinking' ? [block.thinking] : [])).join('\n\n'),
        tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'toolu_1', content: '18 C' },
    ]);
    expect(dropped).toEqual([]);
  });

  it('comes back from the replayed history too', () => {
    const [question, ...rest] = input;
    const { request } = toChatRequest(validateResponsesRequest({ model: 'm', input: rest.slice(2) }), [
      question as InputItem,
      ...rest.slice(0, 2),
    ]);
    expect(request.messages[1]?.thinking_blocks).toEqual(blocks);
  });

  it("leaves out other vendors' and damaged encrypted_content, naming it, as before", () => {
    for (const other of ['gAAAAABo-opaque', `${envelope.slice(0, -4)}`]) {
      const items = input.map((item) => (item.type === 'reasoning' ? { ...item, encrypted_content: other } : item));
      const { request, dropped } = toChatRequest(validateResponsesRequest({ model: 'm', input: items }), []);
      expect(request.messages[1]).not.toHaveProperty('thinking_blocks');
      expect(request.messages[1]?.reasoning_content).toBe('thinking');
      expect(dropped).toEqual(['input.reasoning.encrypted_content']);
    }
  });
});
