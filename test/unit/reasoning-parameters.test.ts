import { describe, expect, it } from 'vitest';
import type { ModelConfig } from '../../src/config/schema.js';
import type { ChatCompletionRequest } from '../../src/openai/types.js';
import { fitThinking } from '../../src/providers/anthropic/fit-thinking.js';
import { createAnthropicProvider } from '../../src/providers/anthropic/index.js';
import type { Provider } from '../../src/providers/provider.js';
import { applyParameterSupport } from '../../src/routing/parameters.js';

/**
 * The router's side of asking a model to reason: a model configured `thinking: none` (any provider) has reasoning
 * left out and named, or refused; a value the model lacks is replaced and named `name=value`, or refused. And the
 * Anthropic wire form of `thinking` fitted to each model (fit-thinking.ts).
 */

function model(upstreamModel: string, parameters: Partial<ModelConfig['parameters']> = {}): ModelConfig {
  return {
    name: 'm',
    upstreamModel,
    parameters: { unsupported: [], onUnsupported: 'drop', ...parameters },
  } as unknown as ModelConfig;
}

const request = (extra: Record<string, unknown>): ChatCompletionRequest =>
  ({ model: 'm', messages: [{ role: 'user', content: 'hi' }], ...extra }) as ChatCompletionRequest;

const chatProvider = { name: 'p', type: 'openai' } as unknown as Provider;
const anthropic = createAnthropicProvider(
  {
    name: 'claude',
    type: 'anthropic',
    baseUrl: 'http://127.0.0.1:1/v1',
    version: '2023-06-01',
    beta: [],
    headers: {},
  } as never,
  // The translation is all this test uses; no call is made.
  {} as never,
) as Provider;

describe('parameters.thinking: none, for any provider', () => {
  it('leaves out what asks for reasoning, names it, and takes neutral values silently', () => {
    const none = model('gpt', { thinking: 'none' });
    const prepared = applyParameterSupport(
      request({
        reasoning_effort: 'high',
        include_reasoning: true,
        thinking: { type: 'enabled', budget_tokens: 2000 },
      }),
      none,
      chatProvider,
    );
    expect(prepared.dropped).toEqual(['reasoning_effort', 'include_reasoning', 'thinking']);
    expect(prepared.request).not.toHaveProperty('reasoning_effort');
    const neutral = applyParameterSupport(
      request({ reasoning_effort: 'none', include_reasoning: false, thinking: { type: 'disabled' } }),
      none,
      chatProvider,
    );
    expect(neutral.dropped).toEqual([]);
    expect(neutral.request).not.toHaveProperty('thinking');
  });

  it('refuses with on_unsupported: refuse', () => {
    expect(() =>
      applyParameterSupport(
        request({ reasoning_effort: 'low' }),
        model('gpt', { thinking: 'none', onUnsupported: 'refuse' }),
        chatProvider,
      ),
    ).toThrow(/'reasoning_effort' is not supported/);
  });

  it('leaves a model without the setting alone', () => {
    expect(applyParameterSupport(request({ reasoning_effort: 'high' }), model('gpt'), chatProvider).dropped).toEqual(
      [],
    );
  });
});

describe('a value the model lacks', () => {
  it('is replaced by the nearest it has and named, or refused', () => {
    const prepared = applyParameterSupport(request({ reasoning_effort: 'xhigh' }), model('claude-opus-4-6'), anthropic);
    expect(prepared.request.reasoning_effort).toBe('high');
    expect(prepared.dropped).toEqual(['reasoning_effort=xhigh']);
    expect(() =>
      applyParameterSupport(
        request({ reasoning_effort: 'xhigh' }),
        model('claude-opus-4-6', { onUnsupported: 'refuse' }),
        anthropic,
      ),
    ).toThrow(/Unsupported value: 'reasoning_effort' does not support 'xhigh'/);
    expect(
      applyParameterSupport(request({ reasoning_effort: 'xhigh' }), model('claude-opus-4-7'), anthropic).dropped,
    ).toEqual([]);
  });
});

describe('fitThinking', () => {
  const body = (extra: Record<string, unknown>) => ({ model: 'x', max_tokens: 3000, messages: [], ...extra });

  it('makes enabled adaptive for an adaptive-only model, the effort read from the budget', () => {
    const enabled = (budget: number) => body({ thinking: { type: 'enabled', budget_tokens: budget } });
    expect(fitThinking(enabled(1024), model('claude-opus-4-7')).body).toMatchObject({
      thinking: { type: 'adaptive' },
      output_config: { effort: 'low' },
    });
    expect(fitThinking(enabled(3000), model('claude-fable-5')).body.output_config).toEqual({ effort: 'medium' });
    expect(fitThinking(enabled(9000), model('claude-opus-5')).body).not.toHaveProperty('output_config');
    // Opus 4.6 still takes a budget: the client's thinking goes as it came.
    const kept = enabled(2000);
    expect(fitThinking(kept, model('claude-opus-4-6')).body).toBe(kept);
  });

  it('gives a budget model a budget for adaptive, fitted under max_tokens, or leaves thinking out', () => {
    const adaptive = (effort?: string, maxTokens = 3000) =>
      body({ max_tokens: maxTokens, thinking: { type: 'adaptive' }, ...(effort ? { output_config: { effort } } : {}) });
    expect(fitThinking(adaptive('low'), model('claude-sonnet-4-5')).body.thinking).toEqual({
      type: 'enabled',
      budget_tokens: 1024,
    });
    expect(fitThinking(adaptive(), model('claude-sonnet-4-5')).body.thinking).toEqual({
      type: 'enabled',
      budget_tokens: 2999,
    });
    const cramped = fitThinking(adaptive('high', 1000), model('claude-3-7-sonnet-20250219'));
    expect(cramped.body).not.toHaveProperty('thinking');
    expect(cramped.dropped).toEqual(['thinking']);
  });

  it('leaves thinking and effort out for a model that cannot think; disabled goes silently', () => {
    const fitted = fitThinking(
      body({ thinking: { type: 'enabled', budget_tokens: 2000 }, output_config: { effort: 'low', format: {} } }),
      model('claude-3-5-sonnet-latest'),
    );
    expect(fitted.dropped).toEqual(['thinking', 'output_config.effort']);
    expect(fitted.body).not.toHaveProperty('thinking');
    expect(fitted.body.output_config).toEqual({ format: {} });
    const disabled = fitThinking(body({ thinking: { type: 'disabled' } }), model('claude-3-haiku-20240307'));
    expect(disabled.dropped).toEqual([]);
    expect(disabled.body).not.toHaveProperty('thinking');
  });

  it('sends high for xhigh where the model lacks it, named', () => {
    const xhigh = body({ thinking: { type: 'adaptive' }, output_config: { effort: 'xhigh' } });
    expect(fitThinking(xhigh, model('claude-sonnet-4-6'))).toMatchObject({
      body: { output_config: { effort: 'high' } },
      dropped: ['output_config.effort=xhigh'],
    });
    expect(fitThinking(xhigh, model('claude-opus-4-7')).body).toBe(xhigh);
  });
});
