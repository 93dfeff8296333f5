import type { ModelConfig } from '../../config/schema.js';
import type { ChatCompletionRequest } from '../../openai/types.js';
import { openAiOnlyParameters } from '../openai-only-parameters.js';
import { parametersSet } from '../tool-choice.js';
import { convertContents } from './convert-contents.js';
import { convertTools } from './convert-tools.js';
import {
  budgetFor,
  canThink,
  effortReplaced,
  type GeminiThinking,
  geminiThinking,
  isKnownEffort,
  levelFor,
  takesEffort,
} from './thinking.js';
import type { GeminiGenerationConfig, GeminiRequest, GeminiThinkingConfig } from './wire-types.js';

/**
 * The body of `generateContent` / `streamGenerateContent` for an OpenAI chat request. Sampling parameters go into
 * `generationConfig` (`n` -> candidateCount, `max_completion_tokens`/`max_tokens` -> maxOutputTokens, `stop` ->
 * stopSequences, `logprobs`/`top_logprobs` -> responseLogprobs/logprobs); `response_format` -> responseMimeType
 * `application/json`, with `responseJsonSchema` for json_schema; `include_reasoning: true` (vLLM's and OpenRouter's
 * name for asking to see the reasoning) -> `thinkingConfig.includeThoughts`; `reasoning_effort` -> `thinkingBudget` or
 * `thinkingLevel`, as the model takes it (thinking.ts).
 */

const number = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) ? value : undefined;

const notKnown: GeminiThinking = { kind: 'unknown' };

/** The thinking asked of the model: an effort it can take, and its thought summaries when the client wants them. */
function thinkingConfigFor(request: ChatCompletionRequest, thinking: GeminiThinking): GeminiThinkingConfig | undefined {
  const thinkingConfig: GeminiThinkingConfig = {};
  let thinks = canThink(thinking);
  const effort = request.reasoning_effort;
  if (takesEffort(thinking) && isKnownEffort(effort)) {
    if (thinking.kind === 'budget') {
      thinkingConfig.thinkingBudget = budgetFor(effort, thinking);
      thinks = thinkingConfig.thinkingBudget !== 0;
    } else {
      thinkingConfig.thinkingLevel = levelFor(effort, thinking);
    }
  }
  if (request.include_reasoning === true && thinks) thinkingConfig.includeThoughts = true;
  return Object.keys(thinkingConfig).length > 0 ? thinkingConfig : undefined;
}

export function convertRequest(request: ChatCompletionRequest, thinking: GeminiThinking = notKnown): GeminiRequest {
  const { systemInstruction, contents } = convertContents(request.messages);
  const body: GeminiRequest = { contents };
  if (systemInstruction) body.systemInstruction = systemInstruction;
  Object.assign(body, convertTools(request.tools, request.tool_choice));

  const config: GeminiGenerationConfig = {};
  const set = <Key extends keyof GeminiGenerationConfig>(key: Key, value: GeminiGenerationConfig[Key] | undefined) => {
    if (value !== undefined) config[key] = value;
  };
  set('temperature', number(request.temperature));
  set('topP', number(request.top_p));
  set('topK', number(request.top_k));
  const n = number(request.n);
  if (n !== undefined && n !== 1) config.candidateCount = n;
  set('maxOutputTokens', number(request.max_completion_tokens) ?? number(request.max_tokens));
  if (typeof request.stop === 'string') config.stopSequences = [request.stop];
  else if (Array.isArray(request.stop) && request.stop.length > 0) config.stopSequences = request.stop as string[];
  set('presencePenalty', number(request.presence_penalty));
  set('frequencyPenalty', number(request.frequency_penalty));
  set('seed', number(request.seed));
  if (request.logprobs === true) {
    config.responseLogprobs = true;
    const top = number(request.top_logprobs);
    if (top !== undefined && top > 0) config.logprobs = top;
  }
  const format = request.response_format as
    | { type?: unknown; json_schema?: { schema?: Record<string, unknown> } }
    | null
    | undefined;
  if (format?.type === 'json_object') config.responseMimeType = 'application/json';
  if (format?.type === 'json_schema') {
    config.responseMimeType = 'application/json';
    if (format.json_schema?.schema) config.responseJsonSchema = format.json_schema.schema;
  }
  // The thought summaries of a thinking model come as `thought` parts (read back as `reasoning_content`).
  const thinkingConfig = thinkingConfigFor(request, thinking);
  if (thinkingConfig) config.thinkingConfig = thinkingConfig;
  if (Object.keys(config).length > 0) body.generationConfig = config;
  // Gemini's own safety settings, for clients that pass them through.
  if (Array.isArray(request.safety_settings)) body.safetySettings = request.safety_settings;
  return body;
}

// `user`, `metadata`, `store` and `prompt_cache_key` are not here on purpose: they ask nothing of the model, so
// Gemini's having no field for them is not worth a dropped-parameters header (routing/parameters.ts).
const untranslatedParameters = ['logit_bias', 'parallel_tool_calls', ...openAiOnlyParameters];

/**
 * OpenAI parameters this adapter has no translation for, for this model (the router drops or refuses them): an effort
 * the model cannot be asked (`none` to a model that does not think asks nothing of it, and is just not sent), and the
 * thought summaries of a model that does not think. For a model whose thinking is not known, an effort, as before.
 */
export function unsupportedParameters(
  request: ChatCompletionRequest,
  model: Pick<ModelConfig, 'upstreamModel' | 'parameters'>,
): string[] {
  const unsupported = parametersSet(request, untranslatedParameters);
  const thinking = geminiThinking(model);
  const effort = request.reasoning_effort;
  const effortTaken =
    (takesEffort(thinking) && isKnownEffort(effort)) || (thinking.kind === 'none' && effort === 'none');
  if (effortTaken) unsupported.splice(unsupported.indexOf('reasoning_effort'), 1);
  if (thinking.kind === 'none' && request.include_reasoning === true) unsupported.push('include_reasoning');
  return unsupported;
}

/**
 * The effort named when the model is given another meaning of it (thinking.ts `effortReplaced`), as Claude's `xhigh`
 * is: `reasoning_effort=medium` on 3 Pro, which is sent `high`. The value stays the client's, since the translation
 * picks the level or budget; a model configured to refuse answers 400 unsupported_value instead.
 */
export function replacedValues(
  request: ChatCompletionRequest,
  model: Pick<ModelConfig, 'upstreamModel' | 'parameters'>,
): Readonly<Record<string, unknown>> | undefined {
  const thinking = geminiThinking(model);
  const effort = request.reasoning_effort;
  if (!takesEffort(thinking) || !isKnownEffort(effort) || !effortReplaced(effort, thinking)) return undefined;
  return { reasoning_effort: effort };
}
