import {
  checkEnum,
  fail,
  isObject,
  missing,
  optionalBoolean,
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
 * `tools`, `tool_choice` and `text` of a Responses request. Function tools are flat (`{type: "function", name,
 * parameters}`, not nested under `function` as in chat); a `namespace` tool groups function and custom tools under a
 * name. Hosted tools (`web_search`, `file_search`, `mcp`, …) and tool types the gateway does not know need only a
 * string `type`: the upstream that runs them checks the rest.
 */

const schemaNamePattern = /^[a-zA-Z0-9_-]{1,64}$/;
// A tool type the gateway does not know may be left out and named in a response header: it must be a plain token.
const toolTypePattern = /^[a-zA-Z][a-zA-Z0-9_.:-]{0,63}$/;

function checkNamed(tool: JsonObject, param: string): void {
  const name = requireString(tool, 'name', `${param}.name`);
  if (name === '') fail(`Invalid '${param}.name': empty string.`, `${param}.name`, 'invalid_value');
}

function checkFunctionTool(tool: JsonObject, param: string): void {
  checkNamed(tool, param);
  optionalString(tool, 'description', `${param}.description`);
  if (present(tool.parameters) && !isObject(tool.parameters)) {
    wrongType(`${param}.parameters`, 'an object', tool.parameters);
  }
  optionalBoolean(tool, 'strict', `${param}.strict`);
}

function checkTool(value: unknown, param: string, insideNamespace: boolean): void {
  const tool = requireObject(value, param);
  if (tool.type === undefined || tool.type === null) missing(`${param}.type`);
  if (typeof tool.type !== 'string') wrongType(`${param}.type`, 'a string', tool.type);
  if (insideNamespace) checkEnum(tool.type, ['function', 'custom'], `${param}.type`);
  switch (tool.type) {
    case 'function':
      checkFunctionTool(tool, param);
      return;
    case 'custom':
      checkNamed(tool, param);
      return;
    case 'namespace': {
      checkNamed(tool, param);
      optionalString(tool, 'description', `${param}.description`);
      const inner = requireArray(tool.tools, `${param}.tools`);
      for (let index = 0; index < inner.length; index++) checkTool(inner[index], `${param}.tools[${index}]`, true);
      return;
    }
    default:
      if (!toolTypePattern.test(tool.type)) {
        fail(
          `Invalid '${param}.type': a tool type is a name of letters, digits and '_', '.', ':' or '-', at most 64 characters.`,
          `${param}.type`,
          'invalid_value',
        );
      }
  }
}

export function checkTools(tools: unknown): void {
  if (!Array.isArray(tools)) wrongType('tools', 'an array', tools);
  for (let index = 0; index < tools.length; index++) checkTool(tools[index], `tools[${index}]`, false);
}

export function checkToolChoice(choice: unknown): void {
  if (typeof choice === 'string') {
    checkEnum(choice, ['none', 'auto', 'required'], 'tool_choice');
    return;
  }
  if (!isObject(choice)) wrongType('tool_choice', 'one of a string or an object', choice);
  if (choice.type === undefined || choice.type === null) missing('tool_choice.type');
  if (typeof choice.type !== 'string') wrongType('tool_choice.type', 'a string', choice.type);
  if (choice.type === 'function' || choice.type === 'custom') requireString(choice, 'name', 'tool_choice.name');
  if (choice.type === 'allowed_tools') {
    checkEnum(choice.mode, ['auto', 'required'], 'tool_choice.mode');
    const tools = requireArray(choice.tools, 'tool_choice.tools');
    tools.forEach((tool, index) => {
      const object = requireObject(tool, `tool_choice.tools[${index}]`);
      requireString(object, 'type', `tool_choice.tools[${index}].type`);
    });
  }
}

export function checkText(text: unknown): void {
  const settings = requireObject(text, 'text');
  optionalEnum(settings, 'verbosity', ['low', 'medium', 'high'], 'text.verbosity');
  if (!present(settings.format)) return;
  const format = requireObject(settings.format, 'text.format');
  checkEnum(format.type, ['text', 'json_object', 'json_schema'], 'text.format.type');
  if (format.type !== 'json_schema') return;
  const name = requireString(format, 'name', 'text.format.name');
  if (!schemaNamePattern.test(name)) {
    fail(
      "Invalid 'text.format.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]{1,64}$'.",
      'text.format.name',
      'invalid_value',
    );
  }
  requireObject(format.schema, 'text.format.schema');
  optionalString(format, 'description', 'text.format.description');
  optionalBoolean(format, 'strict', 'text.format.strict');
}
