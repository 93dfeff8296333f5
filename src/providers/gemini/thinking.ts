import type { ModelConfig } from '../../config/schema.js';

/**
 * How a Gemini model can be asked to think, decided from its upstream name (Google's thinking guide and model pages):
 * - Gemini 2.5 takes `thinkingConfig.thinkingBudget`, in tokens, within a range of its own: 2.5 Pro 128..32768 and it
 *   cannot stop thinking; 2.5 Flash 1..24576, 0 turning thinking off; 2.5 Flash-Lite 512..24576, or 0 (off);
 * - Gemini 3 takes `thinkingConfig.thinkingLevel`, from the levels each model accepts (3 Pro: low and high; 3.1 Pro
 *   adds medium; Flash and Flash-Lite also minimal, except 3.7 Flash and later, which refuse minimal);
 * - Gemini 2.0 Flash Thinking and Gemini 3 Pro Image think, but how much cannot be asked;
 * - earlier Gemini models, Gemma, and the 2.x image and speech models do not think: Google refuses `thinkingConfig`;
 * - any other name (an alias such as `gemini-flash-latest`, a tuned model, a release not yet known) is not guessed at.
 * The model's `parameters.thinking` overrides the name: `none` cannot think; `budget` and `adaptive` can, asked as its
 * name says, or, for a name that does not say, with a budget (`budget`: 1..24576, 0 off) or a level (`adaptive`: any).
 */

export type ThinkingLevel = 'minimal' | 'low' | 'medium' | 'high';

export type GeminiThinking =
  /** Not known: asked nothing about thinking beyond `includeThoughts`; an effort is left out and named. */
  | { kind: 'unknown' }
  /** Does not think: `thinkingConfig` is refused upstream. */
  | { kind: 'none' }
  /** Thinks, but the amount cannot be asked for. */
  | { kind: 'fixed' }
  | { kind: 'budget'; minimum: number; maximum: number; canTurnOff: boolean }
  | { kind: 'level'; levels: readonly ThinkingLevel[] };

const levelOrder: readonly ThinkingLevel[] = ['minimal', 'low', 'medium', 'high'];

const unknown: GeminiThinking = { kind: 'unknown' };
const cannotThink: GeminiThinking = { kind: 'none' };
const fixed: GeminiThinking = { kind: 'fixed' };
const anyLevel: GeminiThinking = { kind: 'level', levels: levelOrder };
const anyBudget: GeminiThinking = { kind: 'budget', minimum: 1, maximum: 24576, canTurnOff: true };

/** The bare model id: no resource path (`models/`, Vertex's `projects/…/publishers/google/models/`), no `@version`. */
export function bareModelName(upstreamModel: string): string {
  const last = upstreamModel.slice(upstreamModel.lastIndexOf('/') + 1);
  const at = last.indexOf('@');
  return (at === -1 ? last : last.slice(0, at)).toLowerCase();
}

function gemini25(words: readonly string[]): GeminiThinking {
  if (words[0] === 'pro') return { kind: 'budget', minimum: 128, maximum: 32768, canTurnOff: false };
  if (words[0] === 'flash' && words[1] === 'lite') {
    return { kind: 'budget', minimum: 512, maximum: 24576, canTurnOff: true };
  }
  if (words[0] === 'flash') return { kind: 'budget', minimum: 1, maximum: 24576, canTurnOff: true };
  return unknown;
}

function gemini3(minor: number, words: readonly string[]): GeminiThinking {
  const image = words.includes('image');
  if (words[0] === 'pro') {
    if (image) return fixed;
    return { kind: 'level', levels: minor === 0 ? ['low', 'high'] : ['low', 'medium', 'high'] };
  }
  if (words[0] !== 'flash') return unknown;
  if (image) return { kind: 'level', levels: ['minimal', 'high'] };
  if (words[1] === 'lite') return anyLevel;
  return minor >= 7 ? { kind: 'level', levels: ['low', 'medium', 'high'] } : anyLevel;
}

/** What the upstream model's name says of its thinking. */
export function thinkingOfName(upstreamModel: string): GeminiThinking {
  const name = bareModelName(upstreamModel);
  if (name.startsWith('gemma-')) return cannotThink;
  const match = /^gemini-(\d+)(?:\.(\d+))?-(.+)$/.exec(name);
  if (!match) return name === 'gemini-pro' || name === 'gemini-pro-vision' ? cannotThink : unknown;
  const major = Number(match[1]);
  const minor = Number(match[2] ?? 0);
  const words = (match[3] as string).split('-');
  // Speech, live audio and embedding models are not asked through generateContent's thinking.
  if (words.some((word) => word === 'tts' || word === 'audio' || word === 'live' || word === 'embedding')) {
    return major < 2 || (major === 2 && minor === 0) || words.includes('tts') ? cannotThink : unknown;
  }
  if (major < 2 || (major === 2 && minor < 5)) return words.includes('thinking') ? fixed : cannotThink;
  if (major === 2) {
    if (words.includes('image')) return cannotThink;
    return minor === 5 ? gemini25(words) : unknown;
  }
  return major === 3 ? gemini3(minor, words) : unknown;
}

/** How this configured model is asked to think: its `parameters.thinking` if set, otherwise its upstream name. */
export function geminiThinking(model: Pick<ModelConfig, 'upstreamModel' | 'parameters'>): GeminiThinking {
  const configured = model.parameters.thinking;
  if (configured === 'none') return cannotThink;
  const named = thinkingOfName(model.upstreamModel);
  // A model the name already says how to ask keeps that way; otherwise the configured word says which to use.
  if (configured === undefined || takesEffort(named)) return named;
  return configured === 'budget' ? anyBudget : anyLevel;
}

/** The efforts OpenAI defines, each of which this module can translate. */
const efforts = new Set(['none', 'minimal', 'low', 'medium', 'high', 'xhigh']);

export function isKnownEffort(effort: unknown): effort is string {
  return typeof effort === 'string' && efforts.has(effort);
}

/** Google's own figures for OpenAI's efforts on Gemini 2.5 (its OpenAI-compatible endpoint). */
const effortBudgets: Record<string, number> = { minimal: 1024, low: 1024, medium: 8192, high: 24576 };

/** The budget for an effort, within the model's range; `none` is 0 where thinking can stop, else the minimum. */
export function budgetFor(effort: string, thinking: Extract<GeminiThinking, { kind: 'budget' }>): number {
  if (effort === 'none') return thinking.canTurnOff ? 0 : thinking.minimum;
  if (effort === 'xhigh') return thinking.maximum;
  const wanted = effortBudgets[effort] ?? 8192;
  return Math.min(thinking.maximum, Math.max(thinking.minimum, wanted));
}

const effortLevels: Record<string, ThinkingLevel> = {
  none: 'minimal',
  minimal: 'minimal',
  low: 'low',
  medium: 'medium',
  high: 'high',
  xhigh: 'high',
};

/**
 * The level for an effort, or the nearest the model accepts (a tie goes up: `medium` on 3 Pro is `high`, as Google's
 * OpenAI-compatible endpoint answers). Gemini 3 cannot stop thinking, so `none` is its least.
 */
export function levelFor(effort: string, thinking: Extract<GeminiThinking, { kind: 'level' }>): ThinkingLevel {
  const wanted = levelOrder.indexOf(effortLevels[effort] ?? 'medium');
  let best = thinking.levels[0] ?? 'high';
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const level of thinking.levels) {
    const distance = Math.abs(levelOrder.indexOf(level) - wanted);
    if (distance < bestDistance || (distance === bestDistance && levelOrder.indexOf(level) > wanted)) {
      best = level;
      bestDistance = distance;
    }
  }
  return best;
}

/** Whether the model thinks (or may: a name not known is given the benefit of the doubt, as before). */
export function canThink(thinking: GeminiThinking): boolean {
  return thinking.kind !== 'none';
}

/** Whether an effort can be asked of the model, as a budget or a level. */
export function takesEffort(
  thinking: GeminiThinking,
): thinking is Extract<GeminiThinking, { kind: 'budget' } | { kind: 'level' }> {
  return thinking.kind === 'budget' || thinking.kind === 'level';
}

/**
 * Whether the model is given something other than the effort asked for, which the client could not tell: a level it
 * lacks (the nearest is sent), `none` where thinking cannot stop (the least is sent), a budget clamped into the model's
 * range, and `xhigh` where the model's most is no more than `high`'s. Google's own figures for an effort (`minimal` as
 * `low`'s budget on 2.5) are the effort, not a replacement.
 */
export function effortReplaced(
  effort: string,
  thinking: Extract<GeminiThinking, { kind: 'budget' } | { kind: 'level' }>,
): boolean {
  // Levels are named as efforts are: any other is a replacement (`xhigh` as `high`, `none` as the least).
  if (thinking.kind === 'level') return levelFor(effort, thinking) !== effort;
  if (effort === 'none') return !thinking.canTurnOff;
  const high = effortBudgets.high as number;
  if (effort === 'xhigh') return thinking.maximum <= high;
  return budgetFor(effort, thinking) !== effortBudgets[effort];
}
