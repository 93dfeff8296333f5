import { describe, expect, it } from 'vitest';
import type { ChatCompletionRequest } from '../../src/openai/types.js';
import { convertRequest, unsupportedParameters } from '../../src/providers/anthropic/convert-request.js';

/**
 * OpenAI's reasoning effort (chat's `reasoning_effort`, which the Responses translation makes of `reasoning.effort`)
 * as Claude's extended thinking with a budget, unless the request leaves no room for thinking; then it is left out and
 * named, as it was before it was translated.
 */

const defaults = { upstreamModel: 'claude', stream: false };

function chat(fields: Record<string, unknown>): ChatCompletionRequest {
  return { model: 'claude', messages: [{ role: 'user', content: 'hi' }], ...fields } as ChatCompletionRequest;
}

describe('reasoning_effort for Claude', () => {
  it('asks for thinking with a budget, keeping the default room for the answer', () => {
    const request = chat({ reasoning_effort: 'high' });
    expect(unsupportedParameters(request)).toEqual([]);
    expect(convertRequest(request, defaults)).toMatchObject({
      thinking: { type: 'enabled', budget_tokens: 4096 },
      max_tokens: 4096 + 4096,
    });
    expect(convertRequest(chat({ reasoning_effort: 'low' }), defaults).thinking).toEqual({
      type: 'enabled',
      budget_tokens: 1024,
    });
  });

  it("fits the budget under the client's or the model's output limit", () => {
    expect(convertRequest(chat({ reasoning_effort: 'high', max_completion_tokens: 3000 }), defaults)).toMatchObject({
      thinking: { type: 'enabled', budget_tokens: 2999 },
      max_tokens: 3000,
    });
    expect(convertRequest(chat({ reasoning_effort: 'medium' }), { ...defaults, maxOutputTokens: 64000 })).toMatchObject(
      { thinking: { type: 'enabled', budget_tokens: 2048 }, max_tokens: 64000 },
    );
  });

  it('leaves the effort out, named, where Anthropic would refuse thinking', () => {
    for (const fields of [
      { temperature: 0.2 },
      { top_p: 0.5 },
      { top_k: 5 },
      { tool_choice: 'required' },
      { max_tokens: 1024 },
      { thinking: { type: 'enabled', budget_tokens: 2000 } },
    ]) {
      expect(unsupportedParameters(chat({ reasoning_effort: 'high', ...fields }))).toContain('reasoning_effort');
    }
    expect(unsupportedParameters(chat({ reasoning_effort: 'ludicrous' }))).toEqual(['reasoning_effort']);
  });

  it('honours none as no thinking', () => {
    const request = chat({ reasoning_effort: 'none' });
    expect(unsupportedParameters(request)).toEqual([]);
    expect(convertRequest(request, defaults)).not.toHaveProperty('thinking');
  });

  it('is left out for a tool loop whose signed thinking did not come back, and kept when it did', () => {
    const call = { id: 'toolu_1', type: 'function', function: { name: 'f', arguments: '{}' } };
    const messages = [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: null, tool_calls: [call] },
      { role: 'tool', tool_call_id: 'toolu_1', content: 'ok' },
    ];
    expect(unsupportedParameters(chat({ reasoning_effort: 'high', messages }))).toEqual(['reasoning_effort']);
    const signed = { type: 'thinking', thinking: 't', signature: 's' };
    const [first, assistant, tool] = messages;
    const back = [first, { ...assistant, thinking_blocks: [signed] }, tool];
    expect(unsupportedParameters(chat({ reasoning_effort: 'high', messages: back }))).toEqual([]);
  });
});
