import {
  checkEnum,
  checkStreamOptions,
  fail,
  isObject,
  missing,
  optionalBoolean,
  optionalEnum,
  optionalInteger,
  optionalNumber,
  optionalString,
  present,
  requireModelBody,
  requireObject,
  wrongType,
} from '../../../openai/validation-helpers.js';
import { backgroundUnsupported } from './errors.js';
import type { ResponsesRequest } from './types.js';
import { checkInput } from './validate-input-items.js';
import { checkText, checkToolChoice, checkTools } from './validate-tools.js';

/**
 * Hot-path validation of `POST /v1/responses`, hand-written like the chat validator and worded like OpenAI. What the
 * API constrains is checked; unknown top-level fields are kept and passed on, as for chat completions.
 */

const metadataMaxPairs = 16;
const metadataMaxKey = 64;
const metadataMaxValue = 512;
const reasoningEfforts = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh'] as const;
const reasoningSummaries = ['auto', 'concise', 'detailed'] as const;

function checkMetadata(metadata: unknown): void {
  if (!isObject(metadata)) wrongType('metadata', 'an object', metadata);
  const entries = Object.entries(metadata);
  if (entries.length > metadataMaxPairs) {
    fail(
      `Invalid 'metadata': too many properties. Expected an object with at most ${metadataMaxPairs} properties, but got an object with ${entries.length} properties instead.`,
      'metadata',
      'object_above_max_properties',
    );
  }
  for (const [key, value] of entries) {
    if (key.length > metadataMaxKey) {
      fail(
        `Invalid 'metadata': the key '${key.slice(0, 16)}…' is ${key.length} characters long. Expected keys of at most ${metadataMaxKey} characters.`,
        'metadata',
        'string_above_max_length',
      );
    }
    const param = `metadata.${key}`;
    if (typeof value !== 'string') wrongType(param, 'a string', value);
    if (value.length > metadataMaxValue) {
      fail(
        `Invalid '${param}': string too long. Expected a string with maximum length ${metadataMaxValue}, but got a string with length ${value.length} instead.`,
        param,
        'string_above_max_length',
      );
    }
  }
}

function checkReasoningSettings(reasoning: unknown): void {
  const settings = requireObject(reasoning, 'reasoning');
  optionalEnum(settings, 'effort', reasoningEfforts, 'reasoning.effort');
  optionalEnum(settings, 'summary', reasoningSummaries, 'reasoning.summary');
  optionalEnum(settings, 'generate_summary', reasoningSummaries, 'reasoning.generate_summary');
}

function checkInclude(include: unknown): void {
  if (!Array.isArray(include)) wrongType('include', 'an array', include);
  include.forEach((value, index) => {
    if (typeof value !== 'string') wrongType(`include[${index}]`, 'a string', value);
  });
}

/** Validates a parsed request body; returns it typed. Throws a 400 ApiError naming the parameter. */
export function validateResponsesRequest(body: unknown): ResponsesRequest {
  requireModelBody(body);

  optionalString(body, 'previous_response_id', 'previous_response_id');
  if (body.input === undefined || body.input === null) {
    // The conversation may come from elsewhere: a stored response, a prompt template or an upstream conversation.
    if (!present(body.previous_response_id) && !present(body.prompt) && !present(body.conversation)) missing('input');
  } else {
    checkInput(body.input);
  }
  optionalString(body, 'instructions', 'instructions');

  optionalNumber(body, 'temperature', 0, 2);
  optionalNumber(body, 'top_p', 0, 1);
  optionalNumber(body, 'presence_penalty', -2, 2);
  optionalNumber(body, 'frequency_penalty', -2, 2);
  optionalInteger(body, 'max_output_tokens', 1);
  optionalInteger(body, 'max_tool_calls', 1);
  optionalInteger(body, 'top_logprobs', 0, 20);

  optionalBoolean(body, 'stream', 'stream');
  optionalBoolean(body, 'store', 'store');
  optionalBoolean(body, 'parallel_tool_calls', 'parallel_tool_calls');
  optionalBoolean(body, 'background', 'background');
  if (body.background === true) throw backgroundUnsupported();
  checkStreamOptions(body);

  for (const field of ['user', 'prompt_cache_key', 'safety_identifier', 'service_tier']) {
    optionalString(body, field, field);
  }
  if (present(body.truncation)) checkEnum(body.truncation, ['auto', 'disabled'], 'truncation');
  if (present(body.metadata)) checkMetadata(body.metadata);
  if (present(body.reasoning)) checkReasoningSettings(body.reasoning);
  if (present(body.include)) checkInclude(body.include);
  if (present(body.tools)) checkTools(body.tools);
  if (present(body.tool_choice)) checkToolChoice(body.tool_choice);
  if (present(body.text)) checkText(body.text);
  return body as ResponsesRequest;
}
