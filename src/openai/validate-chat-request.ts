import { splitToolCallId } from '../providers/tool-call-id.js';
import type { ChatCompletionRequest } from './types.js';
import {
  checkEnum,
  checkLogitBias,
  checkStop,
  checkStreamOptions,
  emptyArray,
  fail,
  isObject,
  optionalBoolean,
  optionalInteger,
  optionalNumber,
  optionalString,
  present,
  requireModelBody,
  wrongType,
} from './validation-helpers.js';

/**
 * Hot-path validation of a chat-completions request against the wire contract (§1). Only what the contract
 * constrains is checked; unknown optional fields are kept and passed on. Messages and codes follow OpenAI's own,
 * and every error names the offending parameter in `param` (e.g. `messages[2].content`).
 */

const roles = ['system', 'assistant', 'user', 'function', 'tool', 'developer'] as const;
const userPartTypes = ['text', 'image_url', 'input_audio', 'file'] as const;
const functionNamePattern = /^[a-zA-Z0-9_-]{1,64}$/;

/** A content that is a string or a non-empty array of parts: the parts, or undefined for a string. */
function partsOf(content: unknown, param: string): unknown[] | undefined {
  if (typeof content === 'string') return undefined;
  if (!Array.isArray(content)) wrongType(param, 'one of a string or array of objects', content);
  if (content.length === 0) emptyArray(param);
  return content;
}

/** A text-only content: a string, or a non-empty array of `{type:"text", text}` (and `refusal` for assistants). */
function checkTextContent(content: unknown, param: string, allowRefusal: boolean): void {
  const parts = partsOf(content, param);
  if (parts === undefined) return;
  parts.forEach((part, index) => {
    const partParam = `${param}[${index}]`;
    if (!isObject(part)) wrongType(partParam, 'an object', part);
    const allowed = allowRefusal ? ['text', 'refusal'] : ['text'];
    checkEnum(part.type, allowed, `${partParam}.type`);
    const field = part.type === 'refusal' ? 'refusal' : 'text';
    if (typeof part[field] !== 'string') wrongType(`${partParam}.${field}`, 'a string', part[field]);
  });
}

function checkUserContent(content: unknown, param: string): void {
  const parts = partsOf(content, param);
  if (parts === undefined) return;
  parts.forEach((part, index) => {
    const partParam = `${param}[${index}]`;
    if (!isObject(part)) wrongType(partParam, 'an object', part);
    checkEnum(part.type, userPartTypes, `${partParam}.type`);
    if (part.type === 'text' && typeof part.text !== 'string') wrongType(`${partParam}.text`, 'a string', part.text);
    if (part.type === 'image_url') {
      const image = part.image_url;
      if (!isObject(image)) wrongType(`${partParam}.image_url`, 'an object', image);
      if (typeof image.url !== 'string') wrongType(`${partParam}.image_url.url`, 'a string', image.url);
      if (present(image.detail)) checkEnum(image.detail, ['auto', 'low', 'high'], `${partParam}.image_url.detail`);
    }
    if (part.type === 'input_audio' && !isObject(part.input_audio)) {
      wrongType(`${partParam}.input_audio`, 'an object', part.input_audio);
    }
    if (part.type === 'file' && !isObject(part.file)) wrongType(`${partParam}.file`, 'an object', part.file);
  });
}

function checkToolCalls(toolCalls: unknown, param: string): void {
  if (!Array.isArray(toolCalls)) wrongType(param, 'an array', toolCalls);
  toolCalls.forEach((call, index) => {
    const callParam = `${param}[${index}]`;
    if (!isObject(call)) wrongType(callParam, 'an object', call);
    if (typeof call.id !== 'string') {
      if (call.id === undefined)
        fail(`Missing required parameter: '${callParam}.id'.`, `${callParam}.id`, 'missing_required_parameter');
      wrongType(`${callParam}.id`, 'a string', call.id);
    }
    if (call.type === 'function') {
      const fn = call.function;
      if (!isObject(fn)) wrongType(`${callParam}.function`, 'an object', fn);
      if (typeof fn.name !== 'string') wrongType(`${callParam}.function.name`, 'a string', fn.name);
      if (typeof fn.arguments !== 'string') wrongType(`${callParam}.function.arguments`, 'a string', fn.arguments);
    } else if (call.type !== 'custom') {
      checkEnum(call.type, ['function', 'custom'], `${callParam}.type`);
    }
  });
}

function checkMessage(message: unknown, index: number): void {
  const param = `messages[${index}]`;
  if (!isObject(message)) wrongType(param, 'an object', message);
  if (message.role === undefined)
    fail(`Missing required parameter: '${param}.role'.`, `${param}.role`, 'missing_required_parameter');
  checkEnum(message.role, roles, `${param}.role`);
  if (present(message.name) && typeof message.name !== 'string') wrongType(`${param}.name`, 'a string', message.name);
  const content = message.content;
  const contentParam = `${param}.content`;
  switch (message.role) {
    case 'system':
    case 'developer':
    case 'tool':
      if (content === undefined)
        fail(`Missing required parameter: '${contentParam}'.`, contentParam, 'missing_required_parameter');
      checkTextContent(content, contentParam, false);
      if (message.role === 'tool') {
        if (message.tool_call_id === undefined) {
          fail(
            `Missing required parameter: '${param}.tool_call_id'.`,
            `${param}.tool_call_id`,
            'missing_required_parameter',
          );
        }
        if (typeof message.tool_call_id !== 'string')
          wrongType(`${param}.tool_call_id`, 'a string', message.tool_call_id);
      }
      break;
    case 'user':
      if (content === undefined)
        fail(`Missing required parameter: '${contentParam}'.`, contentParam, 'missing_required_parameter');
      checkUserContent(content, contentParam);
      break;
    case 'assistant':
      if (present(content)) checkTextContent(content, contentParam, true);
      if (present(message.tool_calls)) checkToolCalls(message.tool_calls, `${param}.tool_calls`);
      break;
    case 'function':
      if (typeof message.name !== 'string') {
        fail(`Missing required parameter: '${param}.name'.`, `${param}.name`, 'missing_required_parameter');
      }
      break;
  }
}

/**
 * A tool message answers a tool call of the assistant message before it: OpenAI refuses an orphan with a 400, and
 * Anthropic and Gemini cannot take one. Refused here, alike for every provider, rather than by each upstream in its own
 * words and paths. Ids compare without the signature the gateway may carry in them (tool-call-id.ts).
 */
function checkToolAnswers(messages: readonly unknown[]): void {
  let calls: string[] = [];
  messages.forEach((message, index) => {
    const { role, tool_calls: toolCalls, tool_call_id: answered } = message as Record<string, unknown>;
    if (role === 'assistant') {
      calls = Array.isArray(toolCalls) ? toolCalls.map((call) => splitToolCallId(String(call.id)).id) : [];
    } else if (role === 'tool' && !calls.includes(splitToolCallId(answered as string).id)) {
      const param = `messages[${index}].tool_call_id`;
      fail(
        `Invalid '${param}': a message with role 'tool' must answer a tool call of the assistant message before it; '${String(answered).slice(0, 64)}' is none of its 'tool_calls'.`,
        param,
        'invalid_value',
      );
    }
  });
}

function checkTools(tools: unknown): void {
  if (!Array.isArray(tools)) wrongType('tools', 'an array', tools);
  tools.forEach((tool, index) => {
    const param = `tools[${index}]`;
    if (!isObject(tool)) wrongType(param, 'an object', tool);
    if (tool.type === 'custom') return;
    checkEnum(tool.type, ['function', 'custom'], `${param}.type`);
    const fn = tool.function;
    if (!isObject(fn)) {
      if (fn === undefined)
        fail(`Missing required parameter: '${param}.function'.`, `${param}.function`, 'missing_required_parameter');
      wrongType(`${param}.function`, 'an object', fn);
    }
    if (typeof fn.name !== 'string') {
      if (fn.name === undefined)
        fail(
          `Missing required parameter: '${param}.function.name'.`,
          `${param}.function.name`,
          'missing_required_parameter',
        );
      wrongType(`${param}.function.name`, 'a string', fn.name);
    }
    if (!functionNamePattern.test(fn.name)) {
      fail(
        `Invalid '${param}.function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]{1,64}$'.`,
        `${param}.function.name`,
        'invalid_value',
      );
    }
    if (present(fn.description) && typeof fn.description !== 'string') {
      wrongType(`${param}.function.description`, 'a string', fn.description);
    }
    if (present(fn.parameters) && !isObject(fn.parameters))
      wrongType(`${param}.function.parameters`, 'an object', fn.parameters);
    if (present(fn.strict) && typeof fn.strict !== 'boolean')
      wrongType(`${param}.function.strict`, 'a boolean', fn.strict);
  });
}

function checkToolChoice(choice: unknown): void {
  if (typeof choice === 'string') {
    checkEnum(choice, ['none', 'auto', 'required'], 'tool_choice');
    return;
  }
  if (!isObject(choice)) wrongType('tool_choice', 'one of a string or an object', choice);
  checkEnum(choice.type, ['function', 'allowed_tools', 'custom'], 'tool_choice.type');
  if (choice.type === 'function') {
    const fn = choice.function;
    if (!isObject(fn) || typeof fn.name !== 'string') {
      fail(
        "Missing required parameter: 'tool_choice.function.name'.",
        'tool_choice.function.name',
        'missing_required_parameter',
      );
    }
  }
}

function checkResponseFormat(format: unknown): void {
  if (!isObject(format)) wrongType('response_format', 'an object', format);
  checkEnum(format.type, ['text', 'json_object', 'json_schema'], 'response_format.type');
  if (format.type === 'json_schema') {
    const schema = format.json_schema;
    if (!isObject(schema)) {
      fail(
        "Missing required parameter: 'response_format.json_schema'.",
        'response_format.json_schema',
        'missing_required_parameter',
      );
    }
    if (typeof schema.name !== 'string') {
      fail(
        "Missing required parameter: 'response_format.json_schema.name'.",
        'response_format.json_schema.name',
        'missing_required_parameter',
      );
    }
    if (!functionNamePattern.test(schema.name)) {
      fail(
        "Invalid 'response_format.json_schema.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]{1,64}$'.",
        'response_format.json_schema.name',
        'invalid_value',
      );
    }
    if (present(schema.schema) && !isObject(schema.schema))
      wrongType('response_format.json_schema.schema', 'an object', schema.schema);
  }
}

/** Validates a parsed request body; returns it typed. Throws a 400 ApiError naming the parameter. */
export function validateChatRequest(body: unknown): ChatCompletionRequest {
  requireModelBody(body);
  const messages = body.messages;
  if (messages === undefined || messages === null)
    fail("Missing required parameter: 'messages'.", 'messages', 'missing_required_parameter');
  if (!Array.isArray(messages)) wrongType('messages', 'an array', messages);
  if (messages.length === 0) emptyArray('messages');
  for (let index = 0; index < messages.length; index++) checkMessage(messages[index], index);
  checkToolAnswers(messages);

  optionalNumber(body, 'temperature', 0, 2);
  optionalNumber(body, 'top_p', 0, 1);
  optionalInteger(body, 'n', 1, 128);
  optionalNumber(body, 'presence_penalty', -2, 2);
  optionalNumber(body, 'frequency_penalty', -2, 2);
  optionalInteger(body, 'max_tokens', 1);
  optionalInteger(body, 'max_completion_tokens', 1);
  optionalBoolean(body, 'logprobs', 'logprobs');
  optionalInteger(body, 'top_logprobs', 0, 20);
  if (present(body.top_logprobs) && body.logprobs !== true) {
    fail(
      "Invalid 'top_logprobs': 'logprobs' must be set to true when 'top_logprobs' is used.",
      'top_logprobs',
      'invalid_value',
    );
  }
  optionalInteger(body, 'seed', Number.MIN_SAFE_INTEGER);
  checkLogitBias(body.logit_bias);
  checkStop(body.stop);
  optionalBoolean(body, 'stream', 'stream');
  optionalBoolean(body, 'parallel_tool_calls', 'parallel_tool_calls');
  optionalBoolean(body, 'store', 'store');
  optionalString(body, 'user', 'user');
  checkStreamOptions(body, 'include_usage');
  if (present(body.tools)) checkTools(body.tools);
  if (present(body.tool_choice)) checkToolChoice(body.tool_choice);
  if (present(body.response_format)) checkResponseFormat(body.response_format);
  if (present(body.metadata) && !isObject(body.metadata)) wrongType('metadata', 'an object', body.metadata);
  return body as ChatCompletionRequest;
}
