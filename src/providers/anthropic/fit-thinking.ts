import type { ModelConfig } from '../../config/schema.js';
import { budgets, minimumThinkingBudget } from './thinking-from-effort.js';
import {
  adaptiveOnly,
  cannotStopThinking,
  disablesOnlyUpToHigh,
  lacksXhighEffort,
  type ThinkingStyle,
  takesOutputEffort,
  thinkingStyleOf,
} from './thinking-style.js';

/**
 * Anthropic's own `thinking` and `output_config.effort` (a /v1/messages request, or chat's extra `thinking` field)
 * made into what the target model takes, since Claude Code and SDKs send the form their own model wants:
 * - `enabled` to a model that only thinks adaptively: `adaptive`, with an effort read from the budget when the
 *   client set none (under 2048 tokens `low`, under 4096 `medium`, else Anthropic's default, `high`);
 * - `adaptive` to a model that takes a budget: `enabled`, with the budget of the effort (default `high`) fitted under
 *   `max_tokens`; with no room for Anthropic's minimum budget, `thinking` is left out and named;
 * - any thinking to a model that cannot think: left out and named (`disabled` asks nothing and goes silently), and
 *   its `output_config.effort` too;
 * - `output_config.effort: "xhigh"` to a model without it (Opus and Sonnet 4.6, Mythos Preview): `high`, named
 *   `output_config.effort=xhigh`;
 * - `disabled` to a model whose thinking cannot be turned off (thinking-style.ts): `adaptive` at the lowest effort,
 *   `low` (unless the client set one), its text omitted (`display: "omitted"`), named `thinking.type=disabled`;
 *   beside `xhigh` or `max` to Opus 5, which turns thinking off only up to `high`: the effort `high`, named
 *   `output_config.effort=xhigh` (or `=max`);
 * - `output_config.effort` to a budget model that refuses it (all but Opus 4.5): left out, and named unless it was
 *   made into the budget of `adaptive` thinking.
 * What is named is for `x-switchboard-dropped-parameters`, or a 400 where the model is configured to refuse.
 */

export interface FittedThinking {
  body: Record<string, unknown>;
  /** `thinking`, `output_config.effort` (left out), `output_config.effort=xhigh` or `thinking.type=disabled` (replaced). */
  dropped: string[];
}

/** The name the replaced effort is given. */
export const replacedXhigh = 'output_config.effort=xhigh';

/** The name the replaced `disabled` is given. */
export const replacedDisabled = 'thinking.type=disabled';

/** The name an effort above `high` is given where Opus 5 takes it only with thinking on. */
export const replacedMax = 'output_config.effort=max';

type Target = Pick<ModelConfig, 'upstreamModel' | 'parameters'>;

const recordOf = (value: unknown): Record<string, unknown> | undefined =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;

function effortFromBudget(budget: unknown): string | undefined {
  if (typeof budget !== 'number') return undefined;
  if (budget < 2048) return 'low';
  return budget < 4096 ? 'medium' : undefined;
}

function withEffort(body: Record<string, unknown>, effort: string | undefined): void {
  const config = { ...recordOf(body.output_config) };
  if (effort === undefined) delete config.effort;
  else config.effort = effort;
  if (Object.keys(config).length === 0) delete body.output_config;
  else body.output_config = config;
}

function fitForStyle(body: Record<string, unknown>, style: ThinkingStyle, target: Target, dropped: string[]): void {
  const thinking = recordOf(body.thinking);
  const effort = recordOf(body.output_config)?.effort;
  if (style === 'none') {
    if (thinking) {
      delete body.thinking;
      if (thinking.type !== 'disabled') dropped.push('thinking');
    }
    if (effort !== undefined && effort !== null) {
      withEffort(body, undefined);
      dropped.push('output_config.effort');
    }
    return;
  }
  if (style === 'adaptive') {
    if (thinking?.type === 'enabled' && adaptiveOnly(target)) {
      body.thinking = { type: 'adaptive', ...(thinking.display === undefined ? {} : { display: thinking.display }) };
      if (effort === undefined || effort === null) withEffort(body, effortFromBudget(thinking.budget_tokens));
    }
    if (thinking?.type === 'disabled' && cannotStopThinking(target.upstreamModel)) {
      // The client asked for no thinking: what the model cannot help thinking is not shown.
      body.thinking = { type: 'adaptive', display: 'omitted' };
      if (effort === undefined || effort === null) withEffort(body, 'low');
      dropped.push(replacedDisabled);
    }
    const above = effort === 'xhigh' || effort === 'max';
    if (thinking?.type === 'disabled' && above && disablesOnlyUpToHigh(target.upstreamModel)) {
      // No thinking asked for, so what is kept is the most effort the answer itself can have.
      withEffort(body, 'high');
      dropped.push(effort === 'max' ? replacedMax : replacedXhigh);
    }
    if (recordOf(body.output_config)?.effort === 'xhigh' && lacksXhighEffort(target.upstreamModel)) {
      withEffort(body, 'high');
      dropped.push(replacedXhigh);
    }
    return;
  }
  const hasEffort = effort !== undefined && effort !== null;
  if (thinking?.type === 'adaptive') budgetFromAdaptive(body, thinking, effort, dropped);
  if (hasEffort && !takesOutputEffort(target)) {
    withEffort(body, undefined);
    // Made into the budget of adaptive thinking, the effort is kept in the only form the model takes.
    if (thinking?.type !== 'adaptive' || body.thinking === undefined) dropped.push('output_config.effort');
  }
}

/** `adaptive` as a budget: the effort's (default `high`) fitted under `max_tokens`, or left out with no room for it. */
function budgetFromAdaptive(
  body: Record<string, unknown>,
  thinking: Record<string, unknown>,
  effort: unknown,
  dropped: string[],
): void {
  const wanted = budgets[effort === 'max' ? 'xhigh' : typeof effort === 'string' ? effort : 'high'] ?? budgets.high;
  const limit = typeof body.max_tokens === 'number' ? body.max_tokens - 1 : (wanted as number);
  const budget = Math.min(wanted as number, limit);
  if (budget < minimumThinkingBudget) {
    delete body.thinking;
    dropped.push('thinking');
    return;
  }
  body.thinking = {
    type: 'enabled',
    budget_tokens: budget,
    ...(thinking.display === undefined ? {} : { display: thinking.display }),
  };
}

/** The body fitted to the target model; the same object when nothing had to change. */
export function fitThinking(body: Record<string, unknown>, target: Target): FittedThinking {
  const thinking = recordOf(body.thinking);
  const effort = recordOf(body.output_config)?.effort;
  if (!thinking && (effort === undefined || effort === null)) return { body, dropped: [] };
  const fitted = { ...body };
  const dropped: string[] = [];
  fitForStyle(fitted, thinkingStyleOf(target), target, dropped);
  const unchanged =
    fitted.thinking === body.thinking && fitted.output_config === body.output_config && dropped.length === 0;
  return unchanged ? { body, dropped } : { body: fitted, dropped };
}
