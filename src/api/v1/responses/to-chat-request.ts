import { apiError } from '../../../errors/api-error.js';
import type { ChatCompletionRequest, ChatMessage } from '../../../openai/types.js';
import { convertItems, type ItemAt, type MessageOrigin } from './convert-items.js';
import { convertTools, type UnsupportedPolicy } from './convert-tools.js';
import { unsupportedParameter } from './errors.js';
import type { ToolNameMap } from './tool-names.js';
import type { InputItem, ResponsesRequest } from './types.js';

/**
 * A Responses request (and the history replayed before it) as the chat-completions request every provider adapter
 * takes. Settings map to their chat names (`max_output_tokens` -> `max_completion_tokens`, `text.format` ->
 * `response_format`, `reasoning.effort` -> `reasoning_effort`, `text.verbosity` -> `verbosity`, `top_logprobs` with
 * `include: ["message.output_text.logprobs"]` -> `logprobs`); the gateway's own state (`store`, `metadata`,
 * `previous_response_id`) stays with the gateway. What the chat side cannot do (hosted tools, OpenAI's encrypted
 * reasoning, server-side compaction) is left out and named in `dropped` for the
 * `x-switchboard-dropped-parameters` header, or refused with `onUnsupported: 'refuse'`. Top-level fields the gateway
 * does not know are passed on, as chat completions does with its own (vendor extensions such as `top_k`).
 */

export interface ToChatOptions {
  /** `refuse`: anything left out would instead be a 400 naming it (a model configured to refuse). */
  onUnsupported?: UnsupportedPolicy;
  /** The role developer messages get; `system` by default, since not every chat server knows `developer`. */
  developerRole?: 'system' | 'developer';
}

export interface ChatTranslation {
  request: ChatCompletionRequest;
  /** What was left out, for the `x-switchboard-dropped-parameters` header (e.g. `tools.web_search`). */
  dropped: string[];
  /** Chat function names -> the Responses function (and namespace) each stands for. */
  toolNames: ToolNameMap;
  /** Per chat message, the part of the Responses request it came from (client-param.ts names errors with it). */
  origins: MessageOrigin[];
  /** Whether reasoning without Claude's signature is in the messages (reasoning-history.ts settles who gets it). */
  unsignedReasoning: boolean;
}

/** Fields handled here (or the gateway's business); every other top-level field is passed to the chat request. */
const responsesFields = new Set([
  'model',
  'input',
  'instructions',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'text',
  'reasoning',
  'max_output_tokens',
  'max_tool_calls',
  'temperature',
  'top_p',
  'presence_penalty',
  'frequency_penalty',
  'top_logprobs',
  'metadata',
  'store',
  'stream',
  'stream_options',
  'background',
  'previous_response_id',
  'include',
  'truncation',
  'service_tier',
  'user',
  'prompt_cache_key',
  'safety_identifier',
  'prompt',
  'conversation',
  'context_management',
  'client_metadata',
]);

/** Settings with the same name and meaning on both sides. */
const sameNameFields = [
  'temperature',
  'top_p',
  'presence_penalty',
  'frequency_penalty',
  'service_tier',
  'user',
  'prompt_cache_key',
  'safety_identifier',
] as const;

const logprobsInclude = 'message.output_text.logprobs';

function inputItems(input: ResponsesRequest['input']): ItemAt[] {
  if (input === undefined || input === null) return [];
  if (typeof input === 'string') return [{ item: { role: 'user', content: input }, param: 'input' }];
  return input.map((item, index) => ({ item, param: `input[${index}]` }));
}

function convertFormat(request: ResponsesRequest): unknown {
  const format = request.text?.format;
  if (!format || format.type === 'text') return undefined;
  if (format.type === 'json_object') return { type: 'json_object' };
  const schema: Record<string, unknown> = { name: format.name, schema: format.schema };
  if (typeof format.description === 'string') schema.description = format.description;
  if (typeof format.strict === 'boolean') schema.strict = format.strict;
  return { type: 'json_schema', json_schema: schema };
}

export function toChatRequest(
  request: ResponsesRequest,
  history: readonly InputItem[],
  options: ToChatOptions = {},
): ChatTranslation {
  const policy = options.onUnsupported ?? 'drop';
  if (request.prompt !== undefined && request.prompt !== null) {
    throw unsupportedParameter('prompt', 'is not supported with this model: prompt templates live at OpenAI.');
  }
  if (request.conversation !== undefined && request.conversation !== null) {
    throw unsupportedParameter('conversation', 'is not supported with this model; use previous_response_id.');
  }
  const dropped: string[] = [];
  const leaveOut = (name: string, why: string) => {
    if (policy === 'refuse') throw unsupportedParameter(name, why);
    dropped.push(name);
  };

  const tools = convertTools(request, policy);
  dropped.push(...tools.dropped);
  const items = convertItems(
    [...history.map((item) => ({ item, param: 'previous_response_id' })), ...inputItems(request.input)],
    {
      names: tools.names,
      developerRole: options.developerRole ?? 'system',
    },
  );
  // History left out (reasoning, records of hosted tools) is context, not a setting: never refused, since the
  // gateway's own answers carry reasoning items that clients send back.
  dropped.push(...items.dropped);
  if (items.messages.length === 0) {
    throw apiError(
      'empty_array',
      "Invalid 'input': it holds nothing to send to the model (no message, function call or function output).",
      { param: 'input' },
    );
  }
  const instructed = typeof request.instructions === 'string' && request.instructions !== '';
  const messages: ChatMessage[] = instructed
    ? [{ role: 'system', content: request.instructions }, ...items.messages]
    : items.messages;
  const origins: MessageOrigin[] = instructed
    ? [{ param: 'instructions', contentField: 'content', calls: [] }, ...items.origins]
    : items.origins;

  const chat: ChatCompletionRequest = { model: request.model, messages };
  for (const field in request) {
    if (!responsesFields.has(field) && request[field] !== undefined) chat[field] = request[field];
  }
  if (request.stream === true) chat.stream = true;
  for (const field of sameNameFields) {
    const value = request[field];
    if (value !== undefined && value !== null) chat[field] = value;
  }
  if (typeof request.max_output_tokens === 'number') chat.max_completion_tokens = request.max_output_tokens;
  if (tools.tools.length > 0) {
    chat.tools = tools.tools;
    if (tools.toolChoice !== undefined) chat.tool_choice = tools.toolChoice;
    if (typeof request.parallel_tool_calls === 'boolean') chat.parallel_tool_calls = request.parallel_tool_calls;
  }
  const format = convertFormat(request);
  if (format) chat.response_format = format;
  if (typeof request.text?.verbosity === 'string') chat.verbosity = request.text.verbosity;

  const reasoning = request.reasoning;
  if (typeof reasoning?.effort === 'string') chat.reasoning_effort = reasoning.effort;
  // `reasoning.summary` depends on the provider of each deployment (reasoning-summary.ts).

  const include = request.include ?? [];
  if (include.includes(logprobsInclude)) {
    chat.logprobs = true;
    if (typeof request.top_logprobs === 'number' && request.top_logprobs > 0) chat.top_logprobs = request.top_logprobs;
  }
  // `include: ["reasoning.encrypted_content"]` is honoured where the answer has signed thinking (Claude's); a
  // deployment of another provider names it as left out (operation.ts).
  if (request.context_management !== undefined && request.context_management !== null) {
    leaveOut('context_management', 'cannot be honoured by this model.');
  }
  return {
    request: chat,
    dropped: [...new Set(dropped)],
    toolNames: tools.names,
    origins,
    unsignedReasoning: items.unsignedReasoning,
  };
}
