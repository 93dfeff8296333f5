import type { ChatCompletionRequest } from '../../openai/types.js';
import { openAiOnlyParameters } from '../openai-only-parameters.js';
import { parametersSet } from '../tool-choice.js';
import { convertContents } from './convert-contents.js';
import { convertTools } from './convert-tools.js';
import type { GeminiGenerationConfig, GeminiRequest } from './wire-types.js';

/**
 * The body of `generateContent` / `streamGenerateContent` for an OpenAI chat request. Sampling parameters go into
 * `generationConfig` (`n` -> candidateCount, `max_completion_tokens`/`max_tokens` -> maxOutputTokens, `stop` ->
 * stopSequences, `logprobs`/`top_logprobs` -> responseLogprobs/logprobs); `response_format` -> responseMimeType
 * `application/json`, with `responseJsonSchema` for json_schema; `include_reasoning: true` (vLLM's and OpenRouter's
 * name for asking to see the reasoning) -> `thinkingConfig.includeThoughts`.
 */

const number = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) ? value : undefined;

export function convertRequest(request: ChatCompletionRequest): GeminiRequest {
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
  // The thought summaries of a thinking model, as `thought` parts (read back as `reasoning_content`).
  if (request.include_reasoning === true) config.thinkingConfig = { includeThoughts: true };
  if (Object.keys(config).length > 0) body.generationConfig = config;
  // Gemini's own safety settings, for clients that pass them through.
  if (Array.isArray(request.safety_settings)) body.safetySettings = request.safety_settings;
  return body;
}

// `user`, `metadata`, `store` and `prompt_cache_key` are not here on purpose: they ask nothing of the model, so
// Gemini's having no field for them is not worth a dropped-parameters header (routing/parameters.ts).
const untranslatedParameters = ['logit_bias', 'parallel_tool_calls', ...openAiOnlyParameters];

/** OpenAI parameters this adapter has no translation for (the router drops or refuses them). */
export function unsupportedParameters(request: ChatCompletionRequest): string[] {
  const unsupported = parametersSet(request, untranslatedParameters);
  return unsupported;
}
