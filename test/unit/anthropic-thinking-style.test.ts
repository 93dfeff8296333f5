import { describe, expect, it } from 'vitest';
import {
  adaptiveOnly,
  cannotStopThinking,
  disablesOnlyUpToHigh,
  lacksXhighEffort,
  refusesSampling,
  takesOutputEffort,
  thinkingStyleOf,
  thinkingStyleOfName,
} from '../../src/providers/anthropic/thinking-style.js';

/**
 * How each Claude model is asked to think, read from its upstream name as Anthropic, Bedrock and Vertex spell it
 * (dated, `-latest`, `anthropic.…-v1:0`, `…@date`), unless the model's configuration says.
 */

const adaptive = [
  'claude-opus-4-6',
  'claude-sonnet-4-6',
  'claude-sonnet-4-6-20260217',
  'claude-opus-4-7',
  'claude-opus-4-7-latest',
  'claude-opus-4-7@20260101',
  'claude-opus-4-8',
  'claude-opus-4-8[1m]',
  'claude-opus-5',
  'claude-sonnet-5',
  'claude-sonnet-5-20260701',
  'claude-haiku-5',
  'claude-fable-5',
  'claude-fable-5-1',
  'claude-mythos-5',
  'claude-mythos-preview',
  'anthropic.claude-opus-4-7',
  'anthropic.claude-opus-4-6-v1',
  'anthropic.claude-sonnet-4-6',
  'anthropic.claude-mythos-preview',
  'us.anthropic.claude-opus-4-7-v1:0',
  'global.anthropic.claude-fable-5',
  'anthropic/claude-opus-4.7',
  'CLAUDE-OPUS-4-7',
];

const budget = [
  'claude-3-7-sonnet-20250219',
  'claude-3-7-sonnet-latest',
  'claude-3.7-sonnet',
  'claude-sonnet-4-20250514',
  'claude-opus-4-20250514',
  'claude-sonnet-4-0',
  'claude-opus-4-0',
  'claude-opus-4-1',
  'claude-opus-4-1-20250805',
  'claude-sonnet-4-5',
  'claude-sonnet-4-5-20250929',
  'claude-haiku-4-5',
  'claude-haiku-4-5-20251001',
  'claude-opus-4-5@20251101',
  'anthropic.claude-3-7-sonnet-20250219-v1:0',
  'us.anthropic.claude-sonnet-4-5-20250929-v1:0',
  'anthropic.claude-opus-4-1-20250805-v1:0',
  'claude-sonnet-4@20250514',
  // Names it cannot read keep the way every thinking Claude took before adaptive thinking.
  'claude',
  'my-claude-proxy',
  'thinking-tools',
  'mock',
];

const none = [
  'claude-3-5-sonnet-20241022',
  'claude-3-5-sonnet-latest',
  'claude-3-5-haiku-20241022',
  'claude-3.5-sonnet',
  'claude-3-opus-20240229',
  'claude-3-sonnet-20240229',
  'claude-3-haiku-20240307',
  'anthropic.claude-3-5-sonnet-20240620-v1:0',
  'anthropic.claude-3-haiku-20240307-v1:0',
  'claude-3-5-sonnet-v2@20241022',
  'claude-2.1',
  'claude-2',
  'claude-2-0',
  'anthropic.claude-v2:1',
  'claude-instant-1.2',
  'anthropic.claude-instant-v1',
];

const model = (upstreamModel: string, thinking?: 'budget' | 'adaptive' | 'none') => ({
  upstreamModel,
  parameters: { unsupported: [], onUnsupported: 'drop' as const, ...(thinking ? { thinking } : {}) },
});

describe('thinkingStyleOfName', () => {
  it.each(adaptive)('%s thinks adaptively', (name) => expect(thinkingStyleOfName(name)).toBe('adaptive'));
  it.each(budget)('%s thinks with a budget', (name) => expect(thinkingStyleOfName(name)).toBe('budget'));
  it.each(none)('%s cannot think', (name) => expect(thinkingStyleOfName(name)).toBe('none'));
});

describe('thinkingStyleOf', () => {
  it('takes the configuration over the name', () => {
    expect(thinkingStyleOf(model('claude-opus-4-7', 'budget'))).toBe('budget');
    expect(thinkingStyleOf(model('my-proxy', 'adaptive'))).toBe('adaptive');
    expect(thinkingStyleOf(model('claude-sonnet-4-5', 'none'))).toBe('none');
    expect(thinkingStyleOf(model('claude-opus-4-7'))).toBe('adaptive');
  });
});

describe('adaptiveOnly and xhigh', () => {
  it('lets Opus and Sonnet 4.6 keep a budget, not later models', () => {
    expect(adaptiveOnly(model('claude-opus-4-6'))).toBe(false);
    expect(adaptiveOnly(model('anthropic.claude-sonnet-4-6'))).toBe(false);
    expect(adaptiveOnly(model('claude-opus-4-7'))).toBe(true);
    expect(adaptiveOnly(model('claude-mythos-preview'))).toBe(true);
    expect(adaptiveOnly(model('my-proxy', 'adaptive'))).toBe(true);
    expect(adaptiveOnly(model('claude-sonnet-4-5'))).toBe(false);
  });

  it('knows the models without xhigh', () => {
    for (const name of ['claude-opus-4-6', 'claude-sonnet-4-6-20260217', 'anthropic.claude-mythos-preview']) {
      expect(lacksXhighEffort(name), name).toBe(true);
    }
    for (const name of ['claude-opus-4-7', 'claude-sonnet-5', 'claude-fable-5', 'claude-mythos-5']) {
      expect(lacksXhighEffort(name), name).toBe(false);
    }
  });
});

describe('thinking that cannot be turned off, and the effort parameter', () => {
  it('knows the models that refuse disabled, and Opus 5, which takes it up to high', () => {
    const always = ['claude-mythos-preview', 'anthropic.claude-mythos-5', 'claude-fable-5-1', 'claude-opus-5-5'];
    for (const name of [...always, 'claude-sonnet-5-5@20260928']) expect(cannotStopThinking(name), name).toBe(true);
    for (const name of ['claude-opus-4-7', 'claude-opus-4-8', 'claude-opus-5', 'claude-sonnet-5', 'claude-haiku-4-5']) {
      expect(cannotStopThinking(name), name).toBe(false);
    }
    expect(disablesOnlyUpToHigh('claude-opus-5')).toBe(true);
    expect(disablesOnlyUpToHigh('anthropic.claude-opus-5-v1:0')).toBe(true);
    expect(disablesOnlyUpToHigh('claude-opus-5-5')).toBe(false);
  });

  it('gives output_config.effort to adaptive models and Opus 4.5 only, and to names not read', () => {
    for (const name of ['claude-opus-4-5-20251101', 'claude-opus-4-6', 'claude-opus-4-7', 'my-proxy']) {
      expect(takesOutputEffort(model(name)), name).toBe(true);
    }
    const refusing = ['claude-sonnet-4-5', 'claude-haiku-4-5', 'claude-opus-4-1', 'claude-3-7-sonnet-latest'];
    for (const name of [...refusing, 'claude-3-5-sonnet-20241022']) {
      expect(takesOutputEffort(model(name)), name).toBe(false);
    }
  });
});

describe('refusesSampling', () => {
  it('knows the models that take no temperature, top_p or top_k, by any spelling of their name', () => {
    const refusing = [
      'claude-opus-4-7',
      'claude-opus-4-7-20260416',
      'anthropic.claude-opus-4-7-v1:0',
      'us.anthropic.claude-opus-4-8-v1:0',
      'claude-opus-4-8@20260520',
      'claude-opus-5',
      'claude-opus-5-5',
      'claude-sonnet-5',
      'claude-sonnet-5-5[1m]',
      'claude-haiku-5-5',
      'claude-fable-5',
      'claude-fable-5-1',
      'claude-mythos-preview',
      'anthropic.claude-mythos-5-1',
      'openrouter/anthropic/claude-opus-4.7',
    ];
    for (const name of refusing) expect(refusesSampling(name), name).toBe(true);
    const taking = [
      'claude-opus-4-6',
      'claude-sonnet-4-6',
      'claude-opus-4-5-20251101',
      'claude-sonnet-4-5-20250929',
      'claude-haiku-4-5',
      'claude-opus-4-20250514',
      'claude-3-7-sonnet-latest',
      'claude-3-5-haiku-20241022',
      'my-proxy',
    ];
    for (const name of taking) expect(refusesSampling(name), name).toBe(false);
  });
});
