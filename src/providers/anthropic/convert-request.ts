import type { ModelConfig } from '../../config/schema.js';
import type { ChatCompletionRequest } from '../../openai/types.js';
import { openAiOnlyParameters } from '../openai-only-parameters.js';
import { parametersSet } from '../tool-choice.js';
import { budgetRefusal } from './check-budget.js';
import { convertMessages } from './convert-messages.js';
import { hasSignedThinking } from './convert-thinking.js';
import { convertTools } from './convert-tools.js';
import { fitThinking } from './fit-thinking.js';
import { refusedSampling, withoutUnsentSampling } from './refused-sampling.js';
import { adaptiveFromEffort, effortLeftOut, thinkingFromEffort, thinksByEffort } from './thinking-from-effort.js';
import { cannotStopThinking, lacksXhighEffort, type ThinkingStyle, thinkingStyleOf } from './thinking-style.js';
import type { AnthropicRequest } from './wire-types.js';

/**
 * The body of `POST /v1/messages` for an OpenAI chat request. Parameters Anthropic cannot take (logprobs, n > 1,
 * penalties, seed, …) were already dropped or refused by the router (see `unsupportedParameters`).
 */

/** Anthropic requires max_tokens; 4096 is what every Claude model accepts when the model's limit is not configured. */
export const defaultMaxTokens = 4096;

export interface RequestDefaults {
  upstreamModel: string;
  /** The configured model's output limit, used when the client sets none. */
  maxOutputTokens?: number | undefined;
  stream: boolean;
  /** How the model is asked to think (thinking-style.ts); `budget` when not given. */
  thinkingStyle?: ThinkingStyle;
  /** The model's configuration, so Anthropic's own `thinking` is made into what it takes (fit-thinking.ts). */
  model?: Pick<ModelConfig, 'upstreamModel' | 'parameters'>;
}

const number = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) ? value : undefined;

export function convertRequest(request: ChatCompletionRequest, defaults: RequestDefaults): AnthropicRequest {
  const { system, messages } = convertMessages(request.messages);
  const body: AnthropicRequest = {
    model: defaults.upstreamModel,
    max_tokens:
      number(request.max_completion_tokens) ??
      number(request.max_tokens) ??
      defaults.maxOutputTokens ??
      defaultMaxTokens,
    messages,
  };
  if (system.length > 0) body.system = system;
  const temperature = number(request.temperature);
  // OpenAI's range is 0-2, Anthropic's 0-1 (with the same default, 1): values above 1 are clamped, not rescaled.
  if (temperature !== undefined) body.temperature = Math.min(temperature, 1);
  const topP = number(request.top_p);
  // Claude's newer models refuse temperature and top_p together; top_p 1 (what some clients, LangChain among them,
  // send by default beside a temperature) truncates nothing, so leaving it out changes no answer.
  if (topP !== undefined && !(topP === 1 && temperature !== undefined)) body.top_p = topP;
  // Not an OpenAI field, but clients written for Anthropic-backed gateways send it.
  const topK = number(request.top_k);
  if (topK !== undefined) body.top_k = topK;
  const stop = request.stop;
  if (typeof stop === 'string') body.stop_sequences = [stop];
  else if (Array.isArray(stop) && stop.length > 0) body.stop_sequences = stop as string[];
  if (typeof request.user === 'string' && request.user) body.metadata = { user_id: request.user };
  const { tools, toolChoice } = convertTools(request.tools, request.tool_choice, request.parallel_tool_calls);
  if (tools) body.tools = tools;
  if (toolChoice) body.tool_choice = toolChoice;
  const format = request.response_format as
    | { type?: unknown; json_schema?: { schema?: Record<string, unknown> } }
    | null
    | undefined;
  if (format?.type === 'json_schema') {
    body.output_config = { format: { type: 'json_schema', schema: format.json_schema?.schema ?? { type: 'object' } } };
  }
  // Extended thinking, for clients that ask for it in Anthropic's own terms, or with OpenAI's reasoning effort.
  const style = defaults.thinkingStyle ?? 'budget';
  if (request.thinking && typeof request.thinking === 'object') {
    body.thinking = request.thinking;
    if (defaults.model) {
      // Made into what the model takes; what could not be kept was named by unsupportedParameters.
      const fitted = fitThinking(body as unknown as Record<string, unknown>, defaults.model).body;
      body.thinking = fitted.thinking;
      body.output_config = fitted.output_config as AnthropicRequest['output_config'];
      if (body.thinking === undefined) delete body.thinking;
      if (body.output_config === undefined) delete body.output_config;
    }
    fitClientBudget(body, request, defaults.maxOutputTokens);
  } else if (style === 'adaptive') {
    const lacksXhigh = lacksXhighEffort(defaults.upstreamModel);
    const adaptive = adaptiveFromEffort(request, defaults.maxOutputTokens, defaultMaxTokens, lacksXhigh);
    if (adaptive) {
      body.thinking = adaptive.thinking;
      body.output_config = { ...body.output_config, effort: adaptive.effort } as AnthropicRequest['output_config'];
      body.max_tokens = adaptive.maxTokens;
    } else if (request.reasoning_effort === 'none') {
      lowestThinking(body, request, defaults);
    }
  } else if (style === 'budget') {
    const byEffort = thinkingFromEffort(request, defaults.maxOutputTokens, defaultMaxTokens);
    if (byEffort) {
      body.thinking = byEffort.thinking;
      body.max_tokens = byEffort.maxTokens;
    }
  }
  if (defaults.stream) body.stream = true;
  return body;
}

/**
 * Effort `none`: `thinking: {type: "disabled"}`, said since from Opus 5 on a request without `thinking` thinks; to a
 * model whose thinking cannot be turned off, adaptive thinking at the lowest effort (replacedValues names it), with its
 * text omitted, since the client asked for no reasoning.
 */
function lowestThinking(body: AnthropicRequest, request: ChatCompletionRequest, defaults: RequestDefaults): void {
  if (!cannotStopThinking(defaults.upstreamModel)) {
    body.thinking = { type: 'disabled' };
    return;
  }
  const lowest = adaptiveFromEffort(
    { ...request, reasoning_effort: 'low' },
    defaults.maxOutputTokens,
    defaultMaxTokens,
    false,
  );
  // Anthropic would refuse thinking beside what the request sets (a forced tool): sent as it came.
  if (!lowest) {
    body.thinking = { type: 'disabled' };
    return;
  }
  body.thinking = { type: 'adaptive', display: 'omitted' };
  body.output_config = { ...body.output_config, effort: lowest.effort } as AnthropicRequest['output_config'];
  body.max_tokens = lowest.maxTokens;
}

/**
 * A budget the client gave in Anthropic's terms, under the output limit: without a client's or model's limit the answer
 * keeps the usual room on top of it, as for an effort; a budget Anthropic would refuse is its 400 (check-budget.ts).
 */
function fitClientBudget(body: AnthropicRequest, request: ChatCompletionRequest, modelMaxTokens: number | undefined) {
  const thinking = body.thinking as { type?: unknown; budget_tokens?: unknown } | undefined;
  const budget = thinking?.budget_tokens;
  const limit = number(request.max_completion_tokens) ?? number(request.max_tokens) ?? modelMaxTokens;
  if (thinking?.type === 'enabled' && typeof budget === 'number' && limit === undefined) {
    body.max_tokens = Math.max(body.max_tokens, budget + defaultMaxTokens);
  }
  const refusal = budgetRefusal(body as unknown as Record<string, unknown>);
  if (refusal) throw refusal;
}

const untranslatedParameters = [
  'n',
  'logprobs',
  'top_logprobs',
  'logit_bias',
  'presence_penalty',
  'frequency_penalty',
  'seed',
  ...openAiOnlyParameters.filter((name) => name !== 'reasoning_effort'),
];

/**
 * Extended thinking asked for while a tool loop is under way, without the signed thinking of the assistant message whose
 * calls are being answered (the client did not bring its `thinking_blocks` back): Anthropic wants that turn to start
 * with it and would refuse the request. Without `thinking` that turn is answered as the tool loop needs, which is what
 * Anthropic's own error advises; the next turn may think again.
 */
function thinkingCannotContinue(request: ChatCompletionRequest, style: ThinkingStyle = 'budget'): boolean {
  const type = (request.thinking as { type?: unknown } | null | undefined)?.type;
  const thinks = type === undefined ? thinksByEffort(request, style) : type !== 'disabled';
  if (!thinks) return false;
  const assistant = request.messages.findLast((message) => message.role === 'assistant');
  if (!assistant || !Array.isArray(assistant.tool_calls) || assistant.tool_calls.length === 0) return false;
  return !hasSignedThinking(assistant);
}

/**
 * Whether Claude thinks for this request as the adapter sends it: `thinking` in Anthropic's terms that is not
 * `disabled`, or a reasoning effort nothing keeps from being translated, and a turn that can go on thinking.
 */
export function thinks(request: ChatCompletionRequest, style: ThinkingStyle = 'budget'): boolean {
  if (style === 'none') return false;
  const thinking = request.thinking as { type?: unknown } | null | undefined;
  const asked =
    thinking && typeof thinking === 'object' ? thinking.type !== 'disabled' : thinksByEffort(request, style);
  return asked && !thinkingCannotContinue(request, style);
}

/** The fields that ask a model for its reasoning, which a model that cannot think does not take. */
const reasoningFields = ['reasoning_effort', 'include_reasoning', 'thinking'];

/** OpenAI parameters this adapter has no translation for (the router drops or refuses them). */
export function unsupportedParameters(request: ChatCompletionRequest, model?: ModelConfig): string[] {
  const style = model ? thinkingStyleOf(model) : 'budget';
  const unsupported = parametersSet(request, untranslatedParameters);
  if (model) unsupported.push(...refusedSampling(request, model.upstreamModel));
  // Thinking is judged beside the sampling that is sent, not beside what the client set and will not be sent.
  const sent = withoutUnsentSampling(request, model);
  if (style === 'none') {
    // Neutral values (effort `none`, thinking `disabled`) are removed without being named (routing/parameters.ts).
    unsupported.push(...parametersSet(request, reasoningFields));
  } else {
    if (effortLeftOut(sent, style)) unsupported.push('reasoning_effort');
    // Whichever field asked for the thinking is the one left out.
    if (thinkingCannotContinue(sent, style)) unsupported.push(request.thinking ? 'thinking' : 'reasoning_effort');
  }
  const format = request.response_format as { type?: unknown } | null | undefined;
  if (format && format.type === 'json_object') unsupported.push('response_format');
  return unsupported;
}

/**
 * Values the model lacks, with the one sent instead: `reasoning_effort: "xhigh"` for an adaptive model without it
 * (Opus and Sonnet 4.6, Mythos Preview) is `high`, its highest below; for a model whose thinking cannot be turned off
 * (thinking-style.ts), `reasoning_effort: "none"` and `thinking: {type: "disabled"}` go as they came, and the
 * translation makes them adaptive thinking at `low`, its lowest, with the thinking text omitted.
 */
export function replacedValues(
  request: ChatCompletionRequest,
  model: ModelConfig,
): Readonly<Record<string, unknown>> | undefined {
  if (thinkingStyleOf(model) !== 'adaptive') return undefined;
  const thinkingType = (request.thinking as { type?: unknown } | null | undefined)?.type;
  const sent = withoutUnsentSampling(request, model);
  if (cannotStopThinking(model.upstreamModel)) {
    // Sent as it came: the translation makes it the lowest adaptive thinking (fit-thinking.ts, lowestThinking).
    if (thinkingType === 'disabled') return { thinking: request.thinking };
    const lowest = { ...sent, reasoning_effort: 'low' };
    if (request.reasoning_effort === 'none' && thinkingType === undefined && !effortLeftOut(lowest, 'adaptive')) {
      return { reasoning_effort: 'none' };
    }
  }
  if (request.reasoning_effort !== 'xhigh') return undefined;
  if (!lacksXhighEffort(model.upstreamModel) || effortLeftOut(sent, 'adaptive')) return undefined;
  return { reasoning_effort: 'high' };
}
