import {
  checkEnum,
  fail,
  missing,
  optionalEnum,
  optionalString,
  present,
  requireArray,
  requireObject,
  requireString,
  wrongType,
} from '../../../openai/validation-helpers.js';
import type { JsonObject } from './types.js';

/**
 * The `input` items of a Responses request. The item types the gateway translates (`message`, `function_call`,
 * `function_call_output`, `reasoning`, `item_reference`) are checked field by field; items of other types (hosted
 * tool calls, provider extensions such as `acme:search_result`) only need a string `type`: they are kept for upstreams
 * that speak the Responses API natively, and refused by the translation when it cannot carry them.
 */

const roles = ['user', 'assistant', 'system', 'developer'] as const;
const inputPartTypes = ['input_text', 'input_image', 'input_file', 'input_audio'] as const;
// OpenAI's "easy" assistant messages may carry input parts; history replayed from an answer carries output parts.
const assistantPartTypes = ['output_text', 'refusal', 'input_text', 'input_image', 'input_file'] as const;
const outputPartTypes = ['input_text', 'input_image', 'input_file'] as const;
const imageDetails = ['auto', 'low', 'high', 'original'] as const;

function checkPart(part: unknown, param: string, allowed: readonly string[]): void {
  const object = requireObject(part, param);
  if (object.type === undefined) missing(`${param}.type`);
  checkEnum(object.type, allowed, `${param}.type`);
  switch (object.type) {
    case 'input_text':
    case 'output_text':
      requireString(object, 'text', `${param}.text`);
      if (present(object.annotations) && !Array.isArray(object.annotations)) {
        wrongType(`${param}.annotations`, 'an array', object.annotations);
      }
      return;
    case 'refusal':
      requireString(object, 'refusal', `${param}.refusal`);
      return;
    case 'input_image':
      optionalString(object, 'image_url', `${param}.image_url`);
      optionalString(object, 'file_id', `${param}.file_id`);
      if (!present(object.image_url) && !present(object.file_id)) missing(`${param}.image_url`);
      optionalEnum(object, 'detail', imageDetails, `${param}.detail`);
      return;
    case 'input_file':
      for (const field of ['file_data', 'file_id', 'file_url', 'filename']) {
        optionalString(object, field, `${param}.${field}`);
      }
      if (!present(object.file_data) && !present(object.file_id) && !present(object.file_url)) {
        fail(
          `Invalid '${param}': an input_file needs one of 'file_data', 'file_url' or 'file_id'.`,
          param,
          'missing_required_parameter',
        );
      }
      return;
    case 'input_audio': {
      const audio = requireObject(object.input_audio, `${param}.input_audio`);
      requireString(audio, 'data', `${param}.input_audio.data`);
      requireString(audio, 'format', `${param}.input_audio.format`);
      return;
    }
  }
}

function checkParts(content: unknown, param: string, allowed: readonly string[]): void {
  if (typeof content === 'string') return;
  if (!Array.isArray(content)) wrongType(param, 'one of a string or array of objects', content);
  for (let index = 0; index < content.length; index++) checkPart(content[index], `${param}[${index}]`, allowed);
}

function checkMessage(item: JsonObject, param: string): void {
  if (item.role === undefined) missing(`${param}.role`);
  checkEnum(item.role, roles, `${param}.role`);
  if (item.content === undefined || item.content === null) missing(`${param}.content`);
  checkParts(item.content, `${param}.content`, item.role === 'assistant' ? assistantPartTypes : inputPartTypes);
}

/** A reasoning item's optional `summary` or `content`: a list of `{type, text}` parts of one type. */
function checkTextParts(item: JsonObject, field: string, partTypes: readonly string[], param: string): void {
  if (!present(item[field])) return;
  const parts = requireArray(item[field], `${param}.${field}`);
  parts.forEach((part, index) => {
    const partParam = `${param}.${field}[${index}]`;
    const object = requireObject(part, partParam);
    checkEnum(object.type, partTypes, `${partParam}.type`);
    requireString(object, 'text', `${partParam}.text`);
  });
}

function checkReasoning(item: JsonObject, param: string): void {
  checkTextParts(item, 'summary', ['summary_text'], param);
  checkTextParts(item, 'content', ['reasoning_text'], param);
  optionalString(item, 'encrypted_content', `${param}.encrypted_content`);
}

function checkItem(value: unknown, param: string): void {
  const item = requireObject(value, param);
  if (present(item.id) && typeof item.id !== 'string') wrongType(`${param}.id`, 'a string', item.id);
  const type = item.type;
  if (type === undefined || type === null) {
    checkMessage(item, param);
    return;
  }
  if (typeof type !== 'string') wrongType(`${param}.type`, 'a string', type);
  switch (type) {
    case 'message':
      checkMessage(item, param);
      return;
    case 'function_call':
      requireString(item, 'call_id', `${param}.call_id`);
      requireString(item, 'name', `${param}.name`);
      requireString(item, 'arguments', `${param}.arguments`);
      optionalString(item, 'namespace', `${param}.namespace`);
      return;
    case 'function_call_output': {
      requireString(item, 'call_id', `${param}.call_id`);
      if (item.output === undefined || item.output === null) missing(`${param}.output`);
      checkParts(item.output, `${param}.output`, outputPartTypes);
      return;
    }
    case 'reasoning':
      checkReasoning(item, param);
      return;
    case 'item_reference':
      requireString(item, 'id', `${param}.id`);
      return;
    default:
      if (type === '') fail(`Invalid '${param}.type': empty string.`, `${param}.type`, 'invalid_value');
  }
}

/** Checks `input`: a string (one user message) or an array of items. */
export function checkInput(input: unknown): void {
  if (typeof input === 'string') return;
  if (!Array.isArray(input)) wrongType('input', 'one of a string or array of objects', input);
  for (let index = 0; index < input.length; index++) checkItem(input[index], `input[${index}]`);
}
