import type { ChatCompletionRequest } from '../../openai/types.js';
import type { ThinkingStyle } from './thinking-style.js';

/**
 * OpenAI's `reasoning_effort` (chat) and `reasoning.effort` (Responses, translated to it) as Claude's extended
 * thinking, `{type: "enabled", budget_tokens}`, with LiteLLM's budgets so a client moving between gateways sees the
 * same: minimal and low 1024 (Anthropic's minimum), medium 2048, high 4096, xhigh 8192; `none` asks for no thinking.
 * Thinking is only asked for when the request leaves room for it: Anthropic refuses thinking beside a temperature
 * below 1, a `top_p` below 0.95, `top_k` or a forced tool, and a budget of less than 1024 tokens; in those cases
 * `reasoning_effort` is left out and named, as before it was translated. The sampling judged is what is sent: a model
 * that takes none (refused-sampling.ts) is judged on the request without it. A model that thinks adaptively
 * (thinking-style.ts) gets `thinking: {type: "adaptive", display: "summarized"}` and the effort as
 * `output_config.effort` instead (`minimal` as `low`, Anthropic's lowest); the same settings keep it from thinking,
 * but no budget has to fit. `display: "summarized"` since from Opus 4.7 on the default is `omitted` (no thinking text).
 */

export const minimumThinkingBudget = 1024;

export const budgets: Readonly<Record<string, number>> = {
  minimal: minimumThinkingBudget,
  low: minimumThinkingBudget,
  medium: 2048,
  high: 4096,
  xhigh: 8192,
};

const number = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) ? value : undefined;

/** The output limit the client set (`max_completion_tokens`, or the older `max_tokens`). */
export function clientMaxTokens(request: ChatCompletionRequest): number | undefined {
  return number(request.max_completion_tokens) ?? number(request.max_tokens);
}

/** The budget the effort asks for; undefined for `none`, no effort, or a value this table does not know. */
function budgetOf(request: ChatCompletionRequest): number | undefined {
  const effort = request.reasoning_effort;
  return typeof effort === 'string' ? budgets[effort] : undefined;
}

/** Settings beside which Anthropic refuses thinking. */
function samplingForbidsThinking(request: ChatCompletionRequest): boolean {
  const temperature = number(request.temperature);
  const topP = number(request.top_p);
  if (temperature !== undefined && temperature < 1) return true;
  if (topP !== undefined && topP < 0.95) return true;
  if (request.top_k !== undefined && request.top_k !== null) return true;
  const choice = request.tool_choice;
  return choice === 'required' || (typeof choice === 'object' && choice !== null);
}

/**
 * Whether `reasoning_effort` has to be left out for this request: an effort this table does not know, `thinking`
 * given in Anthropic's own terms (which wins), or a request beside which Anthropic refuses thinking. `none` is
 * honoured (no thinking), not left out.
 */
export function effortLeftOut(request: ChatCompletionRequest, style: ThinkingStyle = 'budget'): boolean {
  const effort = request.reasoning_effort;
  if (effort === undefined || effort === null || effort === 'none') return false;
  if (style === 'none') return true;
  if (request.thinking !== undefined && request.thinking !== null) return true;
  const budget = budgetOf(request);
  if (budget === undefined || samplingForbidsThinking(request)) return true;
  if (style === 'adaptive') return false;
  const limit = clientMaxTokens(request);
  return limit !== undefined && limit <= minimumThinkingBudget;
}

/** Whether the request asks Claude to think through its effort (and nothing keeps it from it). */
export function thinksByEffort(request: ChatCompletionRequest, style: ThinkingStyle = 'budget'): boolean {
  return style !== 'none' && budgetOf(request) !== undefined && !effortLeftOut(request, style);
}

/**
 * The `thinking` and `max_tokens` to send for the effort: the budget fits under the client's (or the model's) output
 * limit, below which it is cut; without a limit, the answer keeps the default room on top of the budget. Undefined
 * when no thinking is asked for, or the limit leaves no room for Anthropic's minimum budget.
 */
export function thinkingFromEffort(
  request: ChatCompletionRequest,
  modelMaxTokens: number | undefined,
  defaultMaxTokens: number,
): { thinking: { type: 'enabled'; budget_tokens: number }; maxTokens: number } | undefined {
  if (!thinksByEffort(request)) return undefined;
  const budget = budgetOf(request) as number;
  const limit = clientMaxTokens(request) ?? modelMaxTokens;
  if (limit === undefined) {
    return { thinking: { type: 'enabled', budget_tokens: budget }, maxTokens: defaultMaxTokens + budget };
  }
  const fitted = Math.min(budget, limit - 1);
  if (fitted < minimumThinkingBudget) return undefined;
  return { thinking: { type: 'enabled', budget_tokens: fitted }, maxTokens: limit };
}

/** The effort an adaptive model is given for OpenAI's: `minimal` is `low`; `xhigh` is `high` where the model lacks it. */
export function adaptiveEffort(effort: string, lacksXhigh: boolean): string {
  if (effort === 'minimal') return 'low';
  if (effort === 'xhigh' && lacksXhigh) return 'high';
  return effort;
}

/**
 * Adaptive thinking for the effort, with the effort as `output_config.effort`. Without a client's or model's output
 * limit the answer keeps the default room on top of what the effort's budget would be, as with a budget.
 */
export function adaptiveFromEffort(
  request: ChatCompletionRequest,
  modelMaxTokens: number | undefined,
  defaultMaxTokens: number,
  lacksXhigh: boolean,
): { thinking: { type: 'adaptive'; display: 'summarized' }; effort: string; maxTokens: number } | undefined {
  if (!thinksByEffort(request, 'adaptive')) return undefined;
  const effort = request.reasoning_effort as string;
  const limit = clientMaxTokens(request) ?? modelMaxTokens ?? defaultMaxTokens + (budgets[effort] as number);
  return {
    thinking: { type: 'adaptive', display: 'summarized' },
    effort: adaptiveEffort(effort, lacksXhigh),
    maxTokens: limit,
  };
}
