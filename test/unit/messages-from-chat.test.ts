import { describe, expect, it } from 'vitest';
import { toAnthropicUsage } from '../../src/api/v1/messages/anthropic-usage.js';
import { fromChatCompletion } from '../../src/api/v1/messages/from-chat-completion.js';
import { mapFinishReason } from '../../src/api/v1/messages/map-finish-reason.js';
import type { ChatCompletion } from '../../src/openai/types.js';
import { messagesFixture } from '../support/messages-fixtures.js';

const completion = (message: Record<string, unknown>, finish: string | null, extra: Record<string, unknown> = {}) =>
  ({
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1,
    model: 'gpt-4o',
    choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finish, ...extra }],
    usage: { prompt_tokens: 10, completion_tokens: 3, total_tokens: 13 },
  }) as ChatCompletion;

describe('chat completion -> Anthropic message', () => {
  it('translates reasoning, text and tool calls (arguments that do not parse become {})', () => {
    const message = fromChatCompletion(messagesFixture('chat-completion-tools.json'), {
      model: 'public-name',
      messageId: 'msg_fixture',
    });
    expect(message).toEqual(messagesFixture('chat-completion-tools.message.json'));
  });

  it('mints a msg_ id and names the requested model when the upstream names none', () => {
    const message = fromChatCompletion({ ...completion({ content: 'hi' }, 'stop'), model: '' }, { model: 'mine' });
    expect(message.id).toMatch(/^msg_[A-Za-z0-9]{24}$/);
    expect(message.model).toBe('mine');
    expect(message.content).toEqual([{ type: 'text', text: 'hi' }]);
  });

  it('maps finish reasons, including stop sequences the upstream names and tool calls finished with "stop"', () => {
    const stopOf = (message: Record<string, unknown>, finish: string | null, extra = {}) => {
      const translated = fromChatCompletion(completion(message, finish, extra), {
        model: 'm',
        stopSequences: ['END'],
      });
      return [translated.stop_reason, translated.stop_sequence];
    };
    expect(stopOf({ content: 'a' }, 'stop')).toEqual(['end_turn', null]);
    expect(stopOf({ content: 'a' }, 'length')).toEqual(['max_tokens', null]);
    expect(stopOf({ content: 'a' }, 'content_filter')).toEqual(['refusal', null]);
    expect(stopOf({ content: 'a' }, null)).toEqual(['end_turn', null]);
    // vLLM names the stop string it matched; SGLang calls it matched_stop.
    expect(stopOf({ content: 'a' }, 'stop', { stop_reason: 'END' })).toEqual(['stop_sequence', 'END']);
    expect(stopOf({ content: 'a' }, 'stop', { matched_stop: 'END' })).toEqual(['stop_sequence', 'END']);
    expect(stopOf({ content: 'a' }, 'stop', { stop_reason: 'OTHER' })).toEqual(['end_turn', null]);
    const call = [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }];
    expect(stopOf({ content: null, tool_calls: call }, 'stop')).toEqual(['tool_use', null]);
    expect(stopOf({ content: null, tool_calls: call }, 'length')).toEqual(['max_tokens', null]);
    expect(stopOf({ content: null, refusal: 'I cannot help with that.' }, 'stop')).toEqual(['refusal', null]);
    expect(mapFinishReason('function_call', false, undefined).stop_reason).toBe('tool_use');
  });

  it('reports an empty answer as empty content, and a tool call without an id with a minted one', () => {
    expect(fromChatCompletion(completion({ content: '' }, 'stop'), { model: 'm' }).content).toEqual([]);
    const [block] = fromChatCompletion(
      completion(
        { content: null, tool_calls: [{ type: 'function', function: { name: 'f', arguments: '[1]' } }] },
        null,
      ),
      { model: 'm' },
    ).content;
    expect(block).toMatchObject({ type: 'tool_use', name: 'f', input: {} });
    expect((block as { id: string }).id).toMatch(/^toolu_/);
  });

  it('counts cache reads and writes apart from input_tokens, as Anthropic does', () => {
    expect(
      toAnthropicUsage({
        prompt_tokens: 100,
        completion_tokens: 7,
        total_tokens: 107,
        prompt_tokens_details: { cached_tokens: 60, cache_write_tokens: 30 },
      }),
    ).toEqual({ input_tokens: 10, output_tokens: 7, cache_creation_input_tokens: 30, cache_read_input_tokens: 60 });
    expect(toAnthropicUsage(undefined)).toEqual({
      input_tokens: 0,
      output_tokens: 0,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    });
  });
});
