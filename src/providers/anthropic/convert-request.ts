import type { ChatCompletionRequest } from '../../openai/types.js';
import { openAiOnlyParameters } from '../openai-only-parameters.js';
import { parametersSet } from '../tool-choice.js';
import { convertMessages } from './convert-messages.js';
import { hasSignedThinking } from './convert-thinking.js';
import { convertTools } from './convert-tools.js';
import { effortLeftOut, thinkingFromEffort, thinksByEffort } from './thinking-from-effort.js';
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
  if (request.thinking && typeof request.thinking === 'object') body.thinking = request.thinking;
  else {
    const byEffort = thinkingFromEffort(request, defaults.maxOutputTokens, defaultMaxTokens);
    if (byEffort) {
      body.thinking = byEffort.thinking;
      body.max_tokens = byEffort.maxTokens;
    }
  }
  if (defaults.stream) body.stream = true;
  return body;
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
function thinkingCannotContinue(request: ChatCompletionRequest): boolean {
  const type = (request.thinking as { type?: unknown } | null | undefined)?.type;
  const thinks = type === undefined ? thinksByEffort(request) : type !== 'disabled';
  if (!thinks) return false;
  const assistant = request.messages.findLast((message) => message.role === 'assistant');
  if (!assistant || !Array.isArray(assistant.tool_calls) || assistant.tool_calls.length === 0) return false;
  return !hasSignedThinking(assistant);
}

/**
 * Whether Claude thinks for this request as the adapter sends it: `thinking` in Anthropic's terms that is not
 * `disabled`, or a reasoning effort nothing keeps from being translated, and a turn that can go on thinking.
 */
export function thinks(request: ChatCompletionRequest): boolean {
  const thinking = request.thinking as { type?: unknown } | null | undefined;
  const asked = thinking && typeof thinking === 'object' ? thinking.type !== 'disabled' : thinksByEffort(request);
  return asked && !thinkingCannotContinue(request);
}

/** OpenAI parameters this adapter has no translation for (the router drops or refuses them). */
export function unsupportedParameters(request: ChatCompletionRequest): string[] {
  const unsupported = parametersSet(request, untranslatedParameters);
  if (effortLeftOut(request)) unsupported.push('reasoning_effort');
  // Whichever field asked for the thinking is the one left out.
  if (thinkingCannotContinue(request)) unsupported.push(request.thinking ? 'thinking' : 'reasoning_effort');
  const format = request.response_format as { type?: unknown } | null | undefined;
  if (format && format.type === 'json_object') unsupported.push('response_format');
  return unsupported;
}
