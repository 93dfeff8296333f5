import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { openAiErrorBody } from '../../src/errors/render-openai.js';
import type { ChatCompletionRequest, ChatMessage } from '../../src/openai/types.js';
import { convertRequest, unsupportedParameters } from '../../src/providers/anthropic/convert-request.js';
import { convertResponse } from '../../src/providers/anthropic/convert-response.js';
import { createAnthropicStreamTranslator } from '../../src/providers/anthropic/translate-stream.js';
import type { AnthropicResponse } from '../../src/providers/anthropic/wire-types.js';
import { parseEvents } from '../support/anthropic-events.js';
import { apiErrorOf } from '../support/api-error.js';
import { joinThinkingBlocks } from '../support/thinking-blocks.js';

/**
 * Claude's signed thinking through chat completions: out as `thinking_blocks` (whole, or as stream fragments that join
 * back into the same blocks), and in again from an assistant message, first in its Anthropic turn, as it came.
 */

const fixture = (name: string) => readFileSync(new URL(`../fixtures/messages/${name}`, import.meta.url), 'utf8');
const recorded = JSON.parse(fixture('native-thinking.json')) as AnthropicResponse;
/** The recorded answer's thinking and redacted thinking, exactly as Anthropic wrote them. */
const recordedThinking = recorded.content.slice(0, 2);

const weatherCall = { id: 'toolu_01Native', type: 'function', function: { name: 'get_weather', arguments: '{}' } };
const thinkingOn = { type: 'enabled', budget_tokens: 1024 };

function toolLoop(assistant: Partial<ChatMessage>): ChatCompletionRequest {
  return {
    model: 'm',
    thinking: thinkingOn,
    messages: [
      { role: 'user', content: 'Cafés?' },
      { role: 'assistant', content: 'Here are three.', tool_calls: [weatherCall], ...assistant } as ChatMessage,
      { role: 'tool', tool_call_id: 'toolu_01Native', content: '18 C' },
    ],
  };
}
const convert = (request: ChatCompletionRequest) => convertRequest(request, { upstreamModel: 'claude', stream: false });

describe('thinking blocks out of Claude', () => {
  it('are on the message whole, signature and redacted data as they came, beside reasoning_content', () => {
    const message = convertResponse(recorded, 1).choices[0]?.message as Record<string, unknown>;
    expect(message.thinking_blocks).toEqual(recordedThinking);
    expect(message.reasoning_content).toBe('The user asks about cafés. Let me think.');
    expect(message.tool_calls).toHaveLength(1);
  });

  it('stream as fragments carrying the signature, which join into the same blocks', () => {
    const translator = createAnthropicStreamTranslator('claude', 'm', 1);
    const deltas = parseEvents(fixture('native-thinking.sse'))
      .flatMap(({ data }) => translator.push(data))
      .map((chunk) => chunk.choices[0]?.delta as Record<string, unknown> | undefined);
    expect(joinThinkingBlocks(deltas)).toEqual(recordedThinking);
    // The text still streams as reasoning_content, once.
    expect(deltas.map((delta) => delta?.reasoning_content ?? '').join('')).toBe(
      'The user asks about cafés. Let me think.',
    );
    // Each fragment names its block, the signature in a fragment of its own.
    const signature = (recordedThinking[0] as { signature: string }).signature;
    expect(deltas).toContainEqual({ thinking_blocks: [{ type: 'thinking', thinking: '', signature, index: 0 }] });
    expect(deltas).toContainEqual({
      thinking_blocks: [{ type: 'redacted_thinking', data: (recordedThinking[1] as { data: string }).data, index: 1 }],
    });
  });
});

describe('thinking blocks back to Claude', () => {
  it('open the assistant turn, before its text and tool_use, unchanged, and thinking stays on', () => {
    // As the openai Python SDK's stream helper assembles them: with the fragments' index, which is not sent on.
    const request = toolLoop({ thinking_blocks: recordedThinking.map((block, index) => ({ ...block, index })) });
    const body = convert(request);
    expect(body.messages[1]?.content).toEqual([
      ...recordedThinking,
      { type: 'text', text: 'Here are three.' },
      { type: 'tool_use', id: 'toolu_01Native', name: 'get_weather', input: {} },
    ]);
    expect(JSON.stringify(body.messages[1]?.content.slice(0, 2))).toBe(JSON.stringify(recordedThinking));
    expect(body.thinking).toEqual(thinkingOn);
    expect(unsupportedParameters(request)).toEqual([]);
  });

  it('are read from OpenRouter’s reasoning_details too, pieces of one index joined, other formats left out', () => {
    const [thinking, redacted] = recordedThinking as unknown as [
      { thinking: string; signature: string },
      { data: string },
    ];
    const details = [
      { type: 'reasoning.text', text: thinking.thinking.slice(0, 10), format: 'anthropic-claude-v1', index: 0 },
      {
        type: 'reasoning.text',
        text: thinking.thinking.slice(10),
        signature: thinking.signature,
        format: 'anthropic-claude-v1',
        index: 0,
      },
      { type: 'reasoning.encrypted', data: redacted.data, format: 'anthropic-claude-v1', index: 1 },
      { type: 'reasoning.encrypted', data: 'gAAAA', format: 'openai-responses-v1', index: 2 },
      { type: 'reasoning.summary', summary: 'Cafés.', index: 3 },
    ];
    const request = toolLoop({ reasoning_details: details });
    expect(convert(request).messages[1]?.content.slice(0, 3)).toEqual([
      ...recordedThinking,
      { type: 'text', text: 'Here are three.' },
    ]);
    expect(unsupportedParameters(request)).toEqual([]);
    // Both fields: thinking_blocks is the one read.
    const both = convert(toolLoop({ thinking_blocks: recordedThinking.slice(1), reasoning_details: details }));
    expect(both.messages[1]?.content[0]).toEqual(recordedThinking[1]);
    expect(both.messages[1]?.content[1]).toEqual({ type: 'text', text: 'Here are three.' });
  });

  it('without a signature are left out, and with none left thinking is dropped for the tool loop', () => {
    const request = toolLoop({ thinking_blocks: [{ type: 'thinking', thinking: 'unsigned' }] });
    expect(convert(request).messages[1]?.content[0]).toEqual({ type: 'text', text: 'Here are three.' });
    expect(unsupportedParameters(request)).toEqual(['thinking']);
    expect(unsupportedParameters(toolLoop({}))).toEqual(['thinking']);
    // Thinking brought back on an earlier turn does not answer for the last one.
    const earlier = toolLoop({});
    earlier.messages.splice(1, 0, { role: 'assistant', content: 'Hi.', thinking_blocks: recordedThinking });
    expect(unsupportedParameters(earlier)).toEqual(['thinking']);
  });

  it.each([
    [{ thinking_blocks: 'x' }, 'messages[1].thinking_blocks', 'invalid_type'],
    [{ thinking_blocks: ['x'] }, 'messages[1].thinking_blocks[0]', 'invalid_type'],
    [{ thinking_blocks: [{ type: 'text', text: 'x' }] }, 'messages[1].thinking_blocks[0].type', 'invalid_value'],
    [
      { thinking_blocks: [{ type: 'thinking', signature: 's' }] },
      'messages[1].thinking_blocks[0].thinking',
      'invalid_type',
    ],
    [
      { thinking_blocks: [{ type: 'thinking', thinking: 't', signature: 5 }] },
      'messages[1].thinking_blocks[0].signature',
      'invalid_type',
    ],
    [{ thinking_blocks: [{ type: 'redacted_thinking' }] }, 'messages[1].thinking_blocks[0].data', 'invalid_type'],
    [{ reasoning_details: {} }, 'messages[1].reasoning_details', 'invalid_type'],
    [
      { reasoning_details: [{ type: 'reasoning.text', text: 1 }] },
      'messages[1].reasoning_details[0].text',
      'invalid_type',
    ],
    [{ reasoning_details: [{ type: 'reasoning.encrypted' }] }, 'messages[1].reasoning_details[0].data', 'invalid_type'],
  ])('malformed %j is a 400 naming the field', (assistant, param, code) => {
    const request = toolLoop(assistant as Partial<ChatMessage>);
    // Not a reason to drop thinking (or to refuse it, for a strict model): the block itself is refused.
    expect(unsupportedParameters(request)).toEqual([]);
    const error = apiErrorOf(() => convert(request));
    expect(error.status).toBe(400);
    expect(openAiErrorBody(error).error).toMatchObject({ param, code, type: 'invalid_request_error' });
  });
});
