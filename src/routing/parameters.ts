import type { ModelConfig } from '../config/schema.js';
import { type ApiError, apiError } from '../errors/api-error.js';
import type { ChatCompletionRequest } from '../openai/types.js';
import type { Provider } from '../providers/provider.js';

/**
 * Per-model parameter support. A parameter is unsupported when the provider's adapter cannot translate it or the
 * model's configuration lists it. What happens then follows the model's `parameters.on_unsupported`:
 * - `drop` (default): parameters that only steer sampling (seed, penalties, logit_bias, …) are removed and named in
 *   the `x-switchboard-dropped-parameters` response header; parameters whose absence would change the shape of the
 *   answer (n > 1, logprobs, response_format, tools, audio, …) are still refused, since the client would break on
 *   what came back;
 * - `refuse`: every unsupported parameter is a 400 `unsupported_parameter`, as OpenAI answers for its own models.
 * A parameter set to its neutral value (n: 1, logprobs: false, presence_penalty: 0, temperature: 1, top_p: 1, …) asks
 * for nothing and is simply removed.
 * Parameters that ask nothing of the model (`user`, `metadata`, `store`, `prompt_cache_key`) are never reported: an
 * adapter with no field for them leaves them out, as OpenAI's own models may ignore them, and the header stays a
 * list of what could have changed the answer.
 * A model configured `parameters.thinking: none` (it cannot reason) has the fields that ask for reasoning
 * (`reasoning_effort`, `include_reasoning`, Anthropic's `thinking`) unsupported, whatever its provider; effort `none`
 * and thinking `disabled` ask nothing. A value the model lacks where it has a nearest one (provider.replacedValues)
 * is sent as that one and named `name=value` (an object by its type, `thinking.type=disabled`), or refused with 400
 * unsupported_value.
 */

const shapeChanging = new Set([
  'n',
  'logprobs',
  'top_logprobs',
  'response_format',
  'tools',
  'tool_choice',
  'audio',
  'modalities',
  'prediction',
  'functions',
  'function_call',
]);

const neutralValues: Record<string, unknown> = {
  n: 1,
  logprobs: false,
  top_logprobs: 0,
  presence_penalty: 0,
  frequency_penalty: 0,
  parallel_tool_calls: true,
  reasoning_effort: 'none',
  include_reasoning: false,
  // OpenAI's and Anthropic's defaults: leaving them out changes no answer.
  temperature: 1,
  top_p: 1,
};

/** What asks a model for its reasoning: not for a model that cannot reason. */
const reasoningParameters = ['reasoning_effort', 'include_reasoning', 'thinking'];

export function isNeutral(name: string, value: unknown): boolean {
  if (value === undefined || value === null) return true;
  if (name in neutralValues) return neutralValues[name] === value;
  if (name === 'logit_bias') return typeof value === 'object' && Object.keys(value as object).length === 0;
  if (name === 'response_format') return (value as { type?: unknown }).type === 'text';
  if (name === 'thinking') return (value as { type?: unknown }).type === 'disabled';
  if (name === 'modalities') return Array.isArray(value) && value.length === 1 && value[0] === 'text';
  if (name === 'tools' || name === 'stop') return Array.isArray(value) && value.length === 0;
  return false;
}

export interface PreparedRequest {
  request: ChatCompletionRequest;
  dropped: readonly string[];
}

const noneDropped: readonly string[] = Object.freeze([]);

export function unsupportedValue(name: string, value: unknown, model: string): ApiError {
  return apiError(
    'unsupported_value',
    `Unsupported value: '${name}' does not support '${String(value)}' with this model (${model}).`,
    { param: name },
  );
}

/** The field and value a replacement is named by: an object by its `type` (`thinking.type=disabled`). */
function replacedField(name: string, value: unknown): [string, unknown] {
  const type = value !== null && typeof value === 'object' ? (value as { type?: unknown }).type : undefined;
  return typeof type === 'string' ? [`${name}.type`, type] : [name, value];
}

/** The parameters the model's configuration takes away: those it lists, and reasoning for a model that has none. */
function configuredUnsupported(model: ModelConfig): readonly string[] {
  const listed = model.parameters.unsupported;
  return model.parameters.thinking === 'none' ? [...listed, ...reasoningParameters] : listed;
}

export function unsupportedParameter(name: string, model: string): ApiError {
  return apiError(
    'unsupported_parameter',
    `Unsupported parameter: '${name}' is not supported with this model (${model}).`,
    { param: name },
  );
}

/** The request as this deployment should receive it; throws 400 unsupported_parameter when policy says refuse. */
export function applyParameterSupport(
  request: ChatCompletionRequest,
  model: ModelConfig,
  provider: Provider,
): PreparedRequest {
  const fromProvider = provider.unsupportedParameters?.(request, model);
  const replaced = provider.replacedValues?.(request, model);
  const configured = configuredUnsupported(model);
  // The usual case: an adapter that takes everything and nothing configured, decided without allocating.
  if (
    (fromProvider === undefined || fromProvider.length === 0) &&
    replaced === undefined &&
    configured.every((name) => request[name] === undefined)
  ) {
    return { request, dropped: noneDropped };
  }
  const unsupported = new Set(fromProvider);
  for (const name of configured) if (request[name] !== undefined) unsupported.add(name);
  if (unsupported.size === 0 && replaced === undefined) return { request, dropped: noneDropped };
  const prepared: ChatCompletionRequest = { ...request };
  const dropped: string[] = [];
  for (const [name, value] of Object.entries(replaced ?? {})) {
    if (unsupported.has(name)) continue;
    const [field, lacked] = replacedField(name, request[name]);
    if (model.parameters.onUnsupported === 'refuse') throw unsupportedValue(field, lacked, model.name);
    prepared[name] = value;
    dropped.push(`${field}=${String(lacked)}`);
  }
  for (const name of unsupported) {
    const value = request[name];
    delete prepared[name];
    if (isNeutral(name, value)) continue;
    if (model.parameters.onUnsupported === 'refuse' || shapeChanging.has(name)) {
      throw unsupportedParameter(name, model.name);
    }
    dropped.push(name);
  }
  // Without tools, a tool choice means nothing (and some providers reject it).
  if (!('tools' in prepared)) delete prepared.tool_choice;
  return { request: prepared, dropped };
}
