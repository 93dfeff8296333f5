import { describe, expect, it } from 'vitest';
import type { ModelConfig } from '../../src/config/schema.js';
import type { ChatCompletionRequest } from '../../src/openai/types.js';
import { convertRequest, replacedValues, unsupportedParameters } from '../../src/providers/gemini/convert-request.js';
import { bareModelName, geminiThinking, thinkingOfName } from '../../src/providers/gemini/thinking.js';

/** How each Gemini model is asked to think, by its upstream name (providers/gemini/thinking.ts). */

const pro25 = { kind: 'budget', minimum: 128, maximum: 32768, canTurnOff: false };
const flash25 = { kind: 'budget', minimum: 1, maximum: 24576, canTurnOff: true };
const flashLite25 = { kind: 'budget', minimum: 512, maximum: 24576, canTurnOff: true };
const allLevels = { kind: 'level', levels: ['minimal', 'low', 'medium', 'high'] };

describe('the thinking of a Gemini model, from its name', () => {
  it.each([
    ['gemini-2.5-pro', pro25],
    ['models/gemini-2.5-pro', pro25],
    ['gemini-2.5-pro-preview-05-06', pro25],
    ['gemini-2.5-pro-exp-03-25', pro25],
    ['projects/p/locations/us-central1/publishers/google/models/gemini-2.5-pro', pro25],
    ['publishers/google/models/gemini-2.5-flash@001', flash25],
    ['gemini-2.5-flash', flash25],
    ['Gemini-2.5-Flash', flash25],
    ['gemini-2.5-flash-preview-05-20', flash25],
    ['gemini-2.5-flash-preview-09-2025', flash25],
    ['gemini-2.5-flash-lite', flashLite25],
    ['gemini-2.5-flash-lite-preview-06-17', flashLite25],
    ['gemini-3-pro-preview', { kind: 'level', levels: ['low', 'high'] }],
    ['models/gemini-3-pro-preview', { kind: 'level', levels: ['low', 'high'] }],
    ['gemini-3.1-pro-preview', { kind: 'level', levels: ['low', 'medium', 'high'] }],
    ['gemini-3-flash-preview', allLevels],
    ['gemini-3.5-flash', allLevels],
    ['gemini-3.1-flash-lite-preview', allLevels],
    ['gemini-3.7-flash', { kind: 'level', levels: ['low', 'medium', 'high'] }],
    ['gemini-3.8-flash', { kind: 'level', levels: ['low', 'medium', 'high'] }],
    ['gemini-3.1-flash-image-preview', { kind: 'level', levels: ['minimal', 'high'] }],
    ['gemini-3.1-flash-lite-image', { kind: 'level', levels: ['minimal', 'high'] }],
    ['gemini-3-pro-image-preview', { kind: 'fixed' }],
    ['gemini-2.0-flash-thinking-exp-01-21', { kind: 'fixed' }],
    ['gemini-2.0-flash-thinking-exp', { kind: 'fixed' }],
    ['gemini-2.0-flash', { kind: 'none' }],
    ['gemini-2.0-flash-001', { kind: 'none' }],
    ['gemini-2.0-flash-lite', { kind: 'none' }],
    ['gemini-2.0-flash-lite-preview-02-05', { kind: 'none' }],
    ['gemini-2.0-flash-exp-image-generation', { kind: 'none' }],
    ['gemini-2.0-flash-live-001', { kind: 'none' }],
    ['gemini-1.5-pro', { kind: 'none' }],
    ['gemini-1.5-flash-latest', { kind: 'none' }],
    ['gemini-1.5-flash-8b', { kind: 'none' }],
    ['projects/p/locations/europe-west4/publishers/google/models/gemini-1.5-pro-002', { kind: 'none' }],
    ['gemini-1.0-pro-vision-latest', { kind: 'none' }],
    ['gemini-pro', { kind: 'none' }],
    ['gemma-3-27b-it', { kind: 'none' }],
    ['models/gemma-3n-e4b-it', { kind: 'none' }],
    ['gemini-2.5-flash-image', { kind: 'none' }],
    ['gemini-2.5-flash-image-preview', { kind: 'none' }],
    ['gemini-2.5-flash-preview-tts', { kind: 'none' }],
    ['gemini-2.5-pro-preview-tts', { kind: 'none' }],
    ['gemini-flash-latest', { kind: 'unknown' }],
    ['gemini-exp-1206', { kind: 'unknown' }],
    ['gemini-2.5-computer-use-preview-10-2025', { kind: 'unknown' }],
    ['gemini-2.5-flash-native-audio-preview-09-2025', { kind: 'unknown' }],
    ['gemini-4-pro', { kind: 'unknown' }],
    ['tunedModels/my-model-abc123', { kind: 'unknown' }],
    ['mock', { kind: 'unknown' }],
  ])('%s', (name, expected) => {
    expect(thinkingOfName(name)).toEqual(expected);
  });

  it('reads the bare id out of resource paths and Vertex versions', () => {
    expect(bareModelName('models/gemini-2.5-pro')).toBe('gemini-2.5-pro');
    expect(bareModelName('projects/p/locations/l/publishers/google/models/Gemini-2.5-Pro@002')).toBe('gemini-2.5-pro');
  });
});

const model = (upstreamModel: string, thinking?: 'budget' | 'adaptive' | 'none') =>
  ({
    upstreamModel,
    parameters: { unsupported: [], onUnsupported: 'drop', ...(thinking ? { thinking } : {}) },
  }) as unknown as ModelConfig;

describe('parameters.thinking', () => {
  it('none: the model cannot think, whatever its name', () => {
    expect(geminiThinking(model('gemini-2.5-flash', 'none'))).toEqual({ kind: 'none' });
  });

  it('budget or adaptive: a name that says how keeps its way; one that does not is asked as the word says', () => {
    expect(geminiThinking(model('gemini-2.5-pro', 'adaptive'))).toEqual(pro25);
    expect(geminiThinking(model('gemini-3-pro-preview', 'budget'))).toEqual({ kind: 'level', levels: ['low', 'high'] });
    expect(geminiThinking(model('my-tuned-gemini', 'budget'))).toEqual(flash25);
    expect(geminiThinking(model('gemini-flash-latest', 'adaptive'))).toEqual(allLevels);
    expect(geminiThinking(model('gemini-2.0-flash', 'budget'))).toEqual(flash25);
  });

  it('absent: the name decides', () => {
    expect(geminiThinking(model('gemini-2.0-flash'))).toEqual({ kind: 'none' });
  });
});

const request = (fields: Record<string, unknown>) =>
  ({ model: 'public', messages: [{ role: 'user', content: 'hi' }], ...fields }) as ChatCompletionRequest;
const thinkingConfigOf = (upstreamModel: string, fields: Record<string, unknown>, configured?: 'none') =>
  convertRequest(request(fields), geminiThinking(model(upstreamModel, configured))).generationConfig?.thinkingConfig;

describe('reasoning_effort for Gemini 2.5: a thinking budget within the model’s range', () => {
  it.each([
    ['gemini-2.5-flash', 'minimal', 1024],
    ['gemini-2.5-flash', 'low', 1024],
    ['gemini-2.5-flash', 'medium', 8192],
    ['gemini-2.5-flash', 'high', 24576],
    ['gemini-2.5-flash', 'xhigh', 24576],
    ['gemini-2.5-flash', 'none', 0],
    ['gemini-2.5-flash-lite', 'minimal', 1024],
    ['gemini-2.5-flash-lite', 'none', 0],
    ['gemini-2.5-pro', 'high', 24576],
    ['gemini-2.5-pro', 'xhigh', 32768],
    // 2.5 Pro cannot stop thinking: `none` is its least.
    ['gemini-2.5-pro', 'none', 128],
  ])('%s, %s: %i', (name, effort, budget) => {
    expect(thinkingConfigOf(name, { reasoning_effort: effort })).toEqual({ thinkingBudget: budget });
  });

  it('includes the thoughts when asked, unless thinking is off', () => {
    expect(thinkingConfigOf('gemini-2.5-flash', { reasoning_effort: 'low', include_reasoning: true })).toEqual({
      thinkingBudget: 1024,
      includeThoughts: true,
    });
    expect(thinkingConfigOf('gemini-2.5-flash', { reasoning_effort: 'none', include_reasoning: true })).toEqual({
      thinkingBudget: 0,
    });
    expect(thinkingConfigOf('gemini-2.5-pro', { include_reasoning: true })).toEqual({ includeThoughts: true });
  });
});

describe('reasoning_effort for Gemini 3: a thinking level the model accepts, or the nearest', () => {
  it.each([
    ['gemini-3-pro-preview', 'none', 'low'],
    ['gemini-3-pro-preview', 'minimal', 'low'],
    ['gemini-3-pro-preview', 'low', 'low'],
    ['gemini-3-pro-preview', 'medium', 'high'],
    ['gemini-3-pro-preview', 'high', 'high'],
    ['gemini-3-pro-preview', 'xhigh', 'high'],
    ['gemini-3.1-pro-preview', 'minimal', 'low'],
    ['gemini-3.1-pro-preview', 'medium', 'medium'],
    ['gemini-3-flash-preview', 'none', 'minimal'],
    ['gemini-3-flash-preview', 'minimal', 'minimal'],
    ['gemini-3-flash-preview', 'medium', 'medium'],
    ['gemini-3.7-flash', 'minimal', 'low'],
    ['gemini-3.1-flash-image-preview', 'low', 'minimal'],
    ['gemini-3.1-flash-image-preview', 'medium', 'high'],
  ])('%s, %s: %s', (name, effort, level) => {
    expect(thinkingConfigOf(name, { reasoning_effort: effort })).toEqual({ thinkingLevel: level });
  });
});

describe('models that do not think, or whose thinking is not known', () => {
  it('a model that does not think is asked nothing, thoughts included', () => {
    expect(thinkingConfigOf('gemini-2.0-flash', { reasoning_effort: 'high', include_reasoning: true })).toBeUndefined();
    expect(thinkingConfigOf('gemini-2.5-flash', { include_reasoning: true }, 'none')).toBeUndefined();
  });

  it('a model that thinks by itself is asked for its thoughts only', () => {
    const config = thinkingConfigOf('gemini-2.0-flash-thinking-exp', {
      reasoning_effort: 'low',
      include_reasoning: true,
    });
    expect(config).toEqual({ includeThoughts: true });
  });

  it('a name not known: thoughts asked for as before, no effort', () => {
    expect(thinkingConfigOf('mock', { reasoning_effort: 'low', include_reasoning: true })).toEqual({
      includeThoughts: true,
    });
  });
});

describe('the parameters the adapter cannot translate, per model', () => {
  const unsupported = (upstreamModel: string, fields: Record<string, unknown>, configured?: 'none') =>
    unsupportedParameters(request(fields), model(upstreamModel, configured));

  it('an effort is translated for Gemini 2.5 and 3; an effort no one defines is not', () => {
    expect(unsupported('gemini-2.5-flash', { reasoning_effort: 'high' })).toEqual([]);
    expect(unsupported('gemini-3-pro-preview', { reasoning_effort: 'minimal' })).toEqual([]);
    expect(unsupported('gemini-2.5-flash', { reasoning_effort: 'max' })).toEqual(['reasoning_effort']);
    expect(unsupported('gemini-2.5-flash', { reasoning_effort: 3 })).toEqual(['reasoning_effort']);
  });

  it('a model that does not think names the effort and the thoughts; effort none asks nothing of it', () => {
    expect(unsupported('gemini-2.0-flash', { reasoning_effort: 'low', include_reasoning: true })).toEqual([
      'reasoning_effort',
      'include_reasoning',
    ]);
    expect(unsupported('gemini-2.5-pro', { reasoning_effort: 'low' }, 'none')).toEqual(['reasoning_effort']);
    expect(unsupported('gemini-2.0-flash', { reasoning_effort: 'none', include_reasoning: false })).toEqual([]);
  });

  it('a model that thinks by itself, or one not known, names an effort as before', () => {
    expect(unsupported('gemini-2.0-flash-thinking-exp', { reasoning_effort: 'low', include_reasoning: true })).toEqual([
      'reasoning_effort',
    ]);
    expect(unsupported('gemini-flash-latest', { reasoning_effort: 'none' })).toEqual(['reasoning_effort']);
    expect(unsupported('gemini-flash-latest', { include_reasoning: true, logit_bias: { 1: 2 } })).toEqual([
      'logit_bias',
    ]);
  });
});

describe('an effort given another meaning, named', () => {
  const replaced = (upstreamModel: string, effort: string, configured?: 'none' | 'budget') =>
    replacedValues(request({ reasoning_effort: effort }), model(upstreamModel, configured));

  it('a level the model lacks, or none where thinking cannot stop', () => {
    expect(replaced('gemini-3-pro-preview', 'medium')).toEqual({ reasoning_effort: 'medium' });
    expect(replaced('gemini-3-pro-preview', 'minimal')).toEqual({ reasoning_effort: 'minimal' });
    expect(replaced('gemini-3-pro-preview', 'low')).toBeUndefined();
    expect(replaced('gemini-3.1-pro-preview', 'medium')).toBeUndefined();
    expect(replaced('gemini-3-flash-preview', 'xhigh')).toEqual({ reasoning_effort: 'xhigh' });
    expect(replaced('gemini-3-flash-preview', 'none')).toEqual({ reasoning_effort: 'none' });
    expect(replaced('gemini-3-flash-preview', 'minimal')).toBeUndefined();
  });

  it("a budget other than the effort's: none where thinking cannot stop, xhigh no more than high", () => {
    expect(replaced('gemini-2.5-pro', 'none')).toEqual({ reasoning_effort: 'none' });
    expect(replaced('gemini-2.5-flash', 'none')).toBeUndefined();
    expect(replaced('gemini-2.5-flash', 'xhigh')).toEqual({ reasoning_effort: 'xhigh' });
    expect(replaced('gemini-2.5-pro', 'xhigh')).toBeUndefined();
    expect(replaced('gemini-2.5-flash-lite', 'minimal')).toBeUndefined();
    expect(replaced('gemini-2.5-flash', 'medium')).toBeUndefined();
  });

  it('nothing for a model that cannot be asked an effort, or an effort no one defines', () => {
    expect(replaced('gemini-2.0-flash', 'medium')).toBeUndefined();
    expect(replaced('gemini-flash-latest', 'medium')).toBeUndefined();
    expect(replaced('gemini-3-pro-preview', 'max')).toBeUndefined();
  });
});
