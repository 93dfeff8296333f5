import { describe, expect, it } from 'vitest';
import type { ChatCompletionRequest } from '../../src/openai/types.js';
import { localSamplingDefaults, readGenerationOptions } from '../../src/providers/local/generation-options.js';
import { toChatHistory } from '../../src/providers/local/to-chat-history.js';
import { apiErrorOf } from '../support/api-error.js';

const context = { modelName: 'tiny', vocabularySize: 100, defaultMaxTokens: undefined };
const request = (extra: Record<string, unknown> = {}): ChatCompletionRequest => ({
  model: 'tiny',
  messages: [{ role: 'user', content: 'hi' }],
  ...extra,
});

describe('readGenerationOptions', () => {
  it("uses llama.cpp's local sampling when the client chose none", () => {
    expect(readGenerationOptions(request(), context)).toMatchObject({
      ...localSamplingDefaults,
      seed: undefined,
      maxTokens: undefined,
      stop: [],
    });
  });

  it("completes a client's partial choice with OpenAI's defaults and no truncation", () => {
    expect(readGenerationOptions(request({ temperature: 0.2 }), context)).toMatchObject({
      temperature: 0.2,
      topP: 1,
      topK: 0,
      minP: 0,
    });
    expect(readGenerationOptions(request({ top_p: 0.5 }), context)).toMatchObject({ temperature: 1, topP: 0.5 });
  });

  it('prefers max_completion_tokens, then max_tokens, then the configured default', () => {
    expect(readGenerationOptions(request({ max_tokens: 9, max_completion_tokens: 4 }), context).maxTokens).toBe(4);
    expect(readGenerationOptions(request({ max_tokens: 9 }), context).maxTokens).toBe(9);
    expect(readGenerationOptions(request(), { ...context, defaultMaxTokens: 77 }).maxTokens).toBe(77);
  });

  it('reads stop as a string or a list, and folds int64 seeds into 32 bits', () => {
    expect(readGenerationOptions(request({ stop: 'END' }), context).stop).toEqual(['END']);
    expect(readGenerationOptions(request({ stop: ['a', '', 'b'] }), context).stop).toEqual(['a', 'b']);
    expect(readGenerationOptions(request({ seed: 2 ** 40 + 5 }), context).seed).toBe(5);
    expect(readGenerationOptions(request({ seed: -3 }), context).seed).toBe(3);
  });

  it('maps logit_bias and refuses ids outside the vocabulary', () => {
    expect(readGenerationOptions(request({ logit_bias: { '5': -100, '7': 3 } }), context).logitBias).toEqual([
      [5, -100],
      [7, 3],
    ]);
    expect(apiErrorOf(() => readGenerationOptions(request({ logit_bias: { '100': 1 } }), context)).param).toBe(
      'logit_bias',
    );
    expect(apiErrorOf(() => readGenerationOptions(request({ logit_bias: { abc: 1 } }), context)).param).toBe(
      'logit_bias',
    );
  });

  it('reads response_format', () => {
    expect(
      readGenerationOptions(request({ response_format: { type: 'json_object' } }), context).responseFormat,
    ).toEqual({ type: 'json_object' });
    const schema = { type: 'object', properties: {} };
    expect(
      readGenerationOptions(
        request({ response_format: { type: 'json_schema', json_schema: { name: 'x', schema } } }),
        context,
      ).responseFormat,
    ).toEqual({ type: 'json_schema', schema });
    expect(
      apiErrorOf(() =>
        readGenerationOptions(request({ response_format: { type: 'json_schema', json_schema: {} } }), context),
      ).status,
    ).toBe(400);
  });
});

describe('toChatHistory', () => {
  it('maps roles, joins text parts and ends with an empty model turn', () => {
    expect(
      toChatHistory(
        [
          { role: 'developer', content: 'rules' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'a' },
              { type: 'text', text: 'b' },
            ],
          },
          { role: 'assistant', content: null },
          { role: 'user', content: 'c' },
        ],
        'tiny',
      ),
    ).toEqual([
      { type: 'system', text: 'rules' },
      { type: 'user', text: 'a\nb' },
      { type: 'model', response: [''] },
      { type: 'user', text: 'c' },
      { type: 'model', response: [] },
    ]);
  });

  it('refuses assistant tool calls', () => {
    const error = apiErrorOf(() =>
      toChatHistory(
        [
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }],
          },
        ],
        'tiny',
      ),
    );
    expect(error.param).toBe('messages[0].tool_calls');
  });
});
