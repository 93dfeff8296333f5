import { describe, expect, it } from 'vitest';
import type { ModelConfig } from '../../src/config/schema.js';
import type { ChatCompletionRequest } from '../../src/openai/types.js';
import { convertRequest } from '../../src/providers/anthropic/convert-request.js';
import { fitThinking } from '../../src/providers/anthropic/fit-thinking.js';
import { createAnthropicProvider } from '../../src/providers/anthropic/index.js';
import { thinkingStyleOf } from '../../src/providers/anthropic/thinking-style.js';
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

/** The Anthropic body the adapter sends for a prepared request. */
function toAnthropic(prepared: ChatCompletionRequest, target: ModelConfig): Record<string, unknown> {
  const style = thinkingStyleOf(target);
  const options = { upstreamModel: target.upstreamModel, stream: false, thinkingStyle: style, model: target };
  const body = convertRequest(prepared, { ...options, maxOutputTokens: target.maxOutputTokens });
  return body as unknown as Record<string, unknown>;
}

describe('thinking that cannot be turned off', () => {
  const send = (extra: Record<string, unknown>, upstreamModel: string, parameters = {}) => {
    const target = model(upstreamModel, parameters);
    const prepared = applyParameterSupport(request(extra), target, anthropic);
    return { dropped: prepared.dropped, body: toAnthropic(prepared.request, target) };
  };

  it('sends effort none as the lowest effort, named, where the model always thinks', () => {
    const mythos = send({ reasoning_effort: 'none' }, 'claude-mythos-preview');
    expect(mythos.dropped).toEqual(['reasoning_effort=none']);
    // No reasoning was asked for: the thinking the model cannot help is not shown.
    expect(mythos.body.thinking).toEqual({ type: 'adaptive', display: 'omitted' });
    expect(mythos.body.output_config).toEqual({ effort: 'low' });
    // A model that can stop thinking is told to, since from Opus 5 on it thinks unless told not to.
    const opus = send({ reasoning_effort: 'none' }, 'claude-opus-5');
    expect(opus.dropped).toEqual([]);
    expect(opus.body.thinking).toEqual({ type: 'disabled' });
    expect(opus.body).not.toHaveProperty('output_config');
  });

  it('sends thinking disabled (chat extra field) as adaptive at low, named by its type', () => {
    const fable = send({ thinking: { type: 'disabled' } }, 'claude-fable-5');
    expect(fable.dropped).toEqual(['thinking.type=disabled']);
    expect(fable.body.thinking).toEqual({ type: 'adaptive', display: 'omitted' });
    expect(fable.body.output_config).toEqual({ effort: 'low' });
  });

  it('refuses both with on_unsupported: refuse', () => {
    const refuse = { onUnsupported: 'refuse' };
    expect(() => send({ reasoning_effort: 'none' }, 'claude-sonnet-5-5', refuse)).toThrow(
      /'reasoning_effort' does not support 'none'/,
    );
    expect(() => send({ thinking: { type: 'disabled' } }, 'claude-sonnet-5-5', refuse)).toThrow(
      /'thinking.type' does not support 'disabled'/,
    );
  });
});

describe('sampling a Claude model does not take', () => {
  const send = (extra: Record<string, unknown>, upstreamModel: string, parameters = {}) => {
    const target = model(upstreamModel, parameters);
    const prepared = applyParameterSupport(request(extra), target, anthropic);
    return { dropped: prepared.dropped, body: toAnthropic(prepared.request, target) };
  };

  it('leaves temperature, top_p and top_k out, named; their defaults silently', () => {
    const sent = send({ temperature: 0.2, top_p: 0.9, top_k: 5 }, 'claude-opus-4-7');
    expect(sent.dropped).toEqual(['temperature', 'top_p', 'top_k']);
    for (const name of ['temperature', 'top_p', 'top_k']) expect(sent.body).not.toHaveProperty(name);
    const defaults = send({ temperature: 1, top_p: 1 }, 'claude-sonnet-5');
    expect(defaults.dropped).toEqual([]);
    expect(defaults.body).not.toHaveProperty('temperature');
    expect(send({ temperature: 0.2 }, 'claude-opus-4-6').body.temperature).toBe(0.2);
  });

  it('refuses them with on_unsupported: refuse, but not their defaults', () => {
    const refuse = { onUnsupported: 'refuse' };
    expect(() => send({ temperature: 0.2 }, 'claude-haiku-5-5', refuse)).toThrow(/'temperature' is not supported/);
    expect(send({ temperature: 1 }, 'claude-haiku-5-5', refuse).dropped).toEqual([]);
  });

  it('asks for thinking beside a temperature that is not sent', () => {
    const opus = send({ temperature: 0.2, reasoning_effort: 'low' }, 'claude-opus-4-7');
    expect(opus.dropped).toEqual(['temperature']);
    expect(opus.body.thinking).toEqual({ type: 'adaptive', display: 'summarized' });
    expect(opus.body.output_config).toEqual({ effort: 'low' });
    // Mythos Preview lacks xhigh: replaced, though a temperature was set.
    const mythos = send({ temperature: 0, reasoning_effort: 'xhigh' }, 'claude-mythos-preview');
    expect([...mythos.dropped].sort()).toEqual(['reasoning_effort=xhigh', 'temperature']);
    expect(mythos.body.output_config).toEqual({ effort: 'high' });
    // Effort none to a model that cannot stop thinking, beside a temperature that is not sent.
    const fable = send({ temperature: 0.3, reasoning_effort: 'none' }, 'claude-fable-5');
    expect([...fable.dropped].sort()).toEqual(['reasoning_effort=none', 'temperature']);
    expect(fable.body.thinking).toEqual({ type: 'adaptive', display: 'omitted' });
    // Opus 4.6 takes the temperature, so Anthropic would refuse thinking beside it: the effort is left out.
    const older = send({ temperature: 0.2, reasoning_effort: 'low' }, 'claude-opus-4-6');
    expect(older.dropped).toEqual(['reasoning_effort']);
    expect(older.body).not.toHaveProperty('thinking');
  });
});

describe("a client's budget on chat", () => {
  const upstreamOf = (extra: Record<string, unknown>, maxOutputTokens?: number) => {
    return toAnthropic(request(extra), { ...model('claude-sonnet-4-5'), maxOutputTokens });
  };

  it('keeps the answer its room when no limit was set', () => {
    const body = upstreamOf({ thinking: { type: 'enabled', budget_tokens: 8000 } });
    expect(body.thinking).toEqual({ type: 'enabled', budget_tokens: 8000 });
    expect(body.max_tokens).toBe(8000 + 4096);
  });

  it("is refused as Anthropic refuses it: under 1024, or not under the client's limit", () => {
    expect(() => upstreamOf({ thinking: { type: 'enabled', budget_tokens: 500 } })).toThrow(
      /budget_tokens: Input should be greater than or equal to 1024/,
    );
    expect(() => upstreamOf({ max_tokens: 2000, thinking: { type: 'enabled', budget_tokens: 2000 } })).toThrow(
      /`max_tokens` must be greater than `thinking.budget_tokens`/,
    );
    expect(() => upstreamOf({ thinking: { type: 'enabled', budget_tokens: 4000 } }, 4000)).toThrow(
      /`max_tokens` must be greater/,
    );
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
    // Claude 3.7 takes no effort: with no room for thinking, neither is sent, and both are named.
    const cramped = fitThinking(adaptive('high', 1000), model('claude-3-7-sonnet-20250219'));
    expect(cramped.body).not.toHaveProperty('thinking');
    expect(cramped.body).not.toHaveProperty('output_config');
    expect(cramped.dropped).toEqual(['thinking', 'output_config.effort']);
  });

  it('makes the effort into the budget for a budget model that refuses it; Opus 4.5 keeps it', () => {
    const adaptive = body({ thinking: { type: 'adaptive' }, output_config: { effort: 'medium', format: {} } });
    const sonnet = fitThinking(adaptive, model('claude-sonnet-4-5-20250929'));
    expect(sonnet.body.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
    expect(sonnet.body.output_config).toEqual({ format: {} });
    expect(sonnet.dropped).toEqual([]);
    const opus = fitThinking(adaptive, model('claude-opus-4-5-20251101'));
    expect(opus.body.output_config).toEqual({ effort: 'medium', format: {} });
    expect(opus.dropped).toEqual([]);
    // Beside a budget, or no thinking, it cannot be kept in any form: left out and named.
    const enabled = body({ thinking: { type: 'enabled', budget_tokens: 2000 }, output_config: { effort: 'low' } });
    const haiku = fitThinking(enabled, model('claude-haiku-4-5'));
    expect(haiku.body).not.toHaveProperty('output_config');
    expect(haiku.dropped).toEqual(['output_config.effort']);
    expect(fitThinking(body({ output_config: { effort: 'low' } }), model('claude-opus-4-1')).dropped).toEqual([
      'output_config.effort',
    ]);
    // A name not read keeps what it is sent.
    expect(fitThinking(enabled, model('my-claude')).body).toBe(enabled);
  });

  it('makes disabled the lowest adaptive thinking where thinking cannot be turned off, named', () => {
    const disabled = body({ thinking: { type: 'disabled' } });
    for (const name of ['claude-mythos-preview', 'claude-fable-5', 'claude-mythos-5-1', 'claude-opus-5-5']) {
      expect(fitThinking(disabled, model(name))).toMatchObject({
        body: { thinking: { type: 'adaptive' }, output_config: { effort: 'low' } },
        dropped: ['thinking.type=disabled'],
      });
    }
    // The client's own effort is kept.
    const withEffort = body({ thinking: { type: 'disabled' }, output_config: { effort: 'medium' } });
    expect(fitThinking(withEffort, model('claude-sonnet-5-5')).body.output_config).toEqual({ effort: 'medium' });
    // Opus 4.7, 4.8 and Opus 5 turn thinking off.
    for (const name of ['claude-opus-4-7', 'claude-opus-4-8', 'claude-opus-5']) {
      expect(fitThinking(disabled, model(name)).body).toBe(disabled);
    }
  });

  it('keeps Opus 5 from thinking beside an effort above high by sending high, named', () => {
    for (const effort of ['xhigh', 'max']) {
      const disabled = body({ thinking: { type: 'disabled' }, output_config: { effort } });
      expect(fitThinking(disabled, model('claude-opus-5'))).toMatchObject({
        body: { thinking: { type: 'disabled' }, output_config: { effort: 'high' } },
        dropped: [`output_config.effort=${effort}`],
      });
      expect(fitThinking(disabled, model('claude-opus-4-8')).body).toBe(disabled);
    }
    const high = body({ thinking: { type: 'disabled' }, output_config: { effort: 'high' } });
    expect(fitThinking(high, model('claude-opus-5')).body).toBe(high);
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
