import type { CountTokensRequest, MessagesRequest } from '../../../providers/anthropic/wire-types.js';
import {
  checkInteger,
  checkLiteral,
  checkNumber,
  isObject,
  type JsonObject,
  optionalArray,
  optionalBoolean,
  optionalObject,
  optionalString,
  present,
  requireArray,
  requireObject,
  requireString,
  wrongType,
} from './field-checks.js';
import { requestError } from './request-error.js';
import { checkMessages, checkSystem } from './validate-content.js';

/**
 * Hot-path validation of a Messages request (`POST /v1/messages`, `/v1/messages/count_tokens`), hand-written like the
 * chat one: what Anthropic constrains and the gateway relies on is checked, with Anthropic's own wording and dotted
 * paths (`messages.2.content.0.type: …`). Nothing is copied or removed: the same object comes back typed, unknown
 * fields included, so an Anthropic upstream receives exactly what the client sent.
 *
 * `max_tokens: 0` is accepted: Anthropic documents it for warming the prompt cache without generating.
 */

const toolChoiceTypes = ['auto', 'any', 'tool', 'none'] as const;

function checkTools(value: unknown): void {
  if (!present(value)) return;
  requireArray(value, 'tools').forEach((item, index) => {
    const path = `tools.${index}`;
    const tool = requireObject(item, path);
    if (!present(tool.type) || tool.type === 'custom') {
      if (requireString(tool.name, `${path}.name`) === '') {
        throw requestError(`${path}.name`, 'String should have at least 1 character', 'invalid_value');
      }
      optionalString(tool.description, `${path}.description`);
      requireObject(tool.input_schema, `${path}.input_schema`);
      return;
    }
    // Server tools and Anthropic-defined tools: their own fields are Anthropic's to check.
    requireString(tool.type, `${path}.type`);
    requireString(tool.name, `${path}.name`);
  });
}

function checkToolChoice(value: unknown): void {
  if (!present(value)) return;
  const choice = requireObject(value, 'tool_choice');
  checkLiteral(choice.type, 'tool_choice.type', toolChoiceTypes);
  if (choice.type === 'tool') requireString(choice.name, 'tool_choice.name');
  optionalBoolean(choice.disable_parallel_tool_use, 'tool_choice.disable_parallel_tool_use');
}

function checkThinking(value: unknown): void {
  if (!present(value)) return;
  const thinking = requireObject(value, 'thinking');
  const type = requireString(thinking.type, 'thinking.type');
  if (type === 'enabled') checkInteger(thinking.budget_tokens, 'thinking.budget_tokens', 1, true);
}

function checkStopSequences(value: unknown): void {
  if (!present(value)) return;
  requireArray(value, 'stop_sequences').forEach((item, index) => {
    if (typeof item !== 'string') wrongType(`stop_sequences.${index}`, 'a valid string');
  });
}

function checkOutputConfig(value: unknown): void {
  if (!present(value)) return;
  const config = requireObject(value, 'output_config');
  optionalString(config.effort, 'output_config.effort');
  if (!present(config.format)) return;
  const format = requireObject(config.format, 'output_config.format');
  if (requireString(format.type, 'output_config.format.type') === 'json_schema') {
    requireObject(format.schema, 'output_config.format.schema');
  }
}

function checkCommon(body: JsonObject): void {
  if (requireString(body.model, 'model') === '') {
    throw requestError('model', 'String should have at least 1 character', 'invalid_value');
  }
  checkMessages(body.messages);
  checkSystem(body.system);
  checkTools(body.tools);
  checkToolChoice(body.tool_choice);
  checkThinking(body.thinking);
  checkOutputConfig(body.output_config);
  if (present(body.metadata)) optionalString(requireObject(body.metadata, 'metadata').user_id, 'metadata.user_id');
}

function requireBody(value: unknown): JsonObject {
  if (!isObject(value)) throw requestError('', 'The request body must be a JSON object.', 'invalid_type');
  return value;
}

export function validateMessagesRequest(value: unknown): MessagesRequest {
  const body = requireBody(value);
  checkInteger(body.max_tokens, 'max_tokens', 0, true);
  checkCommon(body);
  checkStopSequences(body.stop_sequences);
  checkNumber(body.temperature, 'temperature', 0, 1);
  checkNumber(body.top_p, 'top_p', 0, 1);
  checkInteger(body.top_k, 'top_k', 0);
  optionalBoolean(body.stream, 'stream');
  optionalString(body.service_tier, 'service_tier');
  optionalArray(body.mcp_servers, 'mcp_servers');
  optionalObject(body.context_management, 'context_management');
  if (present(body.container) && typeof body.container !== 'string') optionalObject(body.container, 'container');
  return body as MessagesRequest;
}

/** count_tokens takes the prompt half of a Messages request: no `max_tokens`, no sampling. */
export function validateCountTokensRequest(value: unknown): CountTokensRequest {
  const body = requireBody(value);
  checkCommon(body);
  return body as CountTokensRequest;
}
