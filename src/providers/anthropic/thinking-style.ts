import type { ModelConfig } from '../../config/schema.js';

/**
 * How a Claude model is asked to think, from `parameters.thinking` or else its upstream name:
 * - `adaptive`: `thinking: {type: "adaptive"}` with `output_config.effort` (Opus and Sonnet 4.6, every 4.7 and later,
 *   Claude 5, Mythos, Fable); from Opus 4.7 on (and Mythos, Fable, Claude 5) it is the only way, `enabled` is a 400;
 * - `budget`: `thinking: {type: "enabled", budget_tokens}` (Claude 3.7, 4, 4.1, 4.5), and any name not read here, the
 *   way every thinking Claude took before adaptive thinking;
 * - `none`: it cannot think (Claude 3.5 and older 3, Claude 2, Instant), and refuses `thinking`.
 */

export type ThinkingStyle = 'budget' | 'adaptive' | 'none';

type Family = 'opus' | 'sonnet' | 'haiku';

interface ClaudeVersion {
  family: Family | undefined;
  major: number;
  minor: number;
}

/**
 * The model's own name: without a router's `vendor/` prefix, Bedrock's `anthropic.` (with a region) and `-v1:0`,
 * Vertex's `@date`, a date, `-latest` or a context suffix such as `[1m]`; dots as dashes (`claude-3.5-sonnet`).
 */
export function bareModelName(upstreamModel: string): string {
  let name = upstreamModel.toLowerCase().trim();
  name = name.slice(name.lastIndexOf('/') + 1);
  name = name.replace(/^(?:[a-z]{2,6}\.)?anthropic\./, '');
  name = name.replace(/@.*$/, '').replace(/\[.*\]$/, '');
  name = name.replace(/:\d+$/, '').replace(/(?<!^claude)-v\d+$/, '');
  name = name.replace(/-latest$/, '').replace(/-\d{8}$/, '');
  return name.replaceAll('.', '-');
}

/** `claude-opus-4-7`, `claude-sonnet-4`, `claude-3-7-sonnet`, `claude-3-haiku`: family and version, when readable. */
function versionOf(name: string): ClaudeVersion | undefined {
  const familyFirst = /^claude-(opus|sonnet|haiku)-(\d+)(?:-(\d{1,2}))?(?:-|$)/.exec(name);
  if (familyFirst) {
    return { family: familyFirst[1] as Family, major: Number(familyFirst[2]), minor: Number(familyFirst[3] ?? 0) };
  }
  const versionFirst = /^claude-(\d+)(?:-(\d))?(?:-(opus|sonnet|haiku))?(?:-|$)/.exec(name);
  if (versionFirst) {
    return {
      family: versionFirst[3] as Family | undefined,
      major: Number(versionFirst[1]),
      minor: Number(versionFirst[2] ?? 0),
    };
  }
  return undefined;
}

/** The style an upstream model name implies; `budget` for a name it cannot read. */
export function thinkingStyleOfName(upstreamModel: string): ThinkingStyle {
  const name = bareModelName(upstreamModel);
  if (/(?:^|-)(?:mythos|fable)(?:-|$)/.test(name)) return 'adaptive';
  if (/^claude-instant(?:-|$)|^claude-v\d/.test(name)) return 'none';
  const version = versionOf(name);
  if (!version) return 'budget';
  const { family, major, minor } = version;
  if (major >= 5) return 'adaptive';
  if (major === 4) {
    if (minor >= 7 || (minor === 6 && family !== 'haiku')) return 'adaptive';
    return 'budget';
  }
  if (major === 3 && minor >= 7) return 'budget';
  return 'none';
}

export function thinkingStyleOf(model: Pick<ModelConfig, 'upstreamModel' | 'parameters'>): ThinkingStyle {
  return model.parameters.thinking ?? thinkingStyleOfName(model.upstreamModel);
}

/**
 * Whether the model takes only adaptive thinking (`enabled` is a 400): every adaptive model but Opus and Sonnet 4.6,
 * which still take a budget (deprecated). A model configured `adaptive` whose name says nothing counts as adaptive only.
 */
export function adaptiveOnly(model: Pick<ModelConfig, 'upstreamModel' | 'parameters'>): boolean {
  if (thinkingStyleOf(model) !== 'adaptive') return false;
  return !/^claude-(?:opus|sonnet)-4-6(?:-|$)/.test(bareModelName(model.upstreamModel));
}

/** Adaptive models whose efforts stop at `high` and `max` (no `xhigh`): Opus and Sonnet 4.6, Mythos Preview. */
export function lacksXhighEffort(upstreamModel: string): boolean {
  const name = bareModelName(upstreamModel);
  return /^claude-(?:opus|sonnet)-4-6(?:-|$)/.test(name) || /(?:^|-)mythos-preview(?:-|$)/.test(name);
}

/**
 * Models whose thinking cannot be turned off, where `thinking: {type: "disabled"}` is a 400 (Anthropic's model pages
 * and migration guides): Mythos and Fable, every release, and Opus and Sonnet 5.5. Opus 5 takes `disabled` (up to
 * effort `high`); later names are not guessed at.
 */
export function cannotStopThinking(upstreamModel: string): boolean {
  const name = bareModelName(upstreamModel);
  return /(?:^|-)(?:mythos|fable)(?:-|$)/.test(name) || /^claude-(?:opus|sonnet)-5-5(?:-|$)/.test(name);
}

/**
 * Whether the model takes `output_config.effort`: every adaptive model, and of those asked with a budget only Opus 4.5
 * (Anthropic's effort page); Claude 3.7, 4, 4.1, Sonnet and Haiku 4.5 refuse it. A name not read keeps it.
 */
export function takesOutputEffort(model: Pick<ModelConfig, 'upstreamModel' | 'parameters'>): boolean {
  const style = thinkingStyleOf(model);
  if (style !== 'budget') return style === 'adaptive';
  const name = bareModelName(model.upstreamModel);
  // A name not read is sent what it was sent, as before.
  return /^claude-opus-4-5(?:-|$)/.test(name) || versionOf(name) === undefined;
}

/** Opus 5 turns thinking off only up to effort `high`: `disabled` beside `xhigh` or `max` is a 400 (its model page). */
export function disablesOnlyUpToHigh(upstreamModel: string): boolean {
  return /^claude-opus-5(?:-\d{8})?$/.test(bareModelName(upstreamModel));
}

/**
 * Models that refuse `temperature`, `top_p` and `top_k` at any value but the default (a 400, "`temperature` is
 * deprecated for this model."): Opus 4.7 and later, Sonnet 5 and later, Haiku 5.5 and later, Mythos and Fable, every
 * release (Anthropic's migration guides and model pages). Older models, and names not read, take them.
 */
export function refusesSampling(upstreamModel: string): boolean {
  const name = bareModelName(upstreamModel);
  if (/(?:^|-)(?:mythos|fable)(?:-|$)/.test(name)) return true;
  const version = versionOf(name);
  if (!version) return false;
  const { family, major, minor } = version;
  if (family === 'opus') return major > 4 || (major === 4 && minor >= 7);
  if (family === 'sonnet') return major >= 5;
  if (family === 'haiku') return major > 5 || (major === 5 && minor >= 5);
  return false;
}
