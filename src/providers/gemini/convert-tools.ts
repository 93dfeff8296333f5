import { untranslatable } from '../message-content.js';
import type { GeminiFunctionDeclaration, GeminiRequest } from './wire-types.js';

/**
 * `tools` -> one `functionDeclarations` tool, parameters as JSON Schema (`parametersJsonSchema`, so OpenAI schemas
 * need no conversion to Gemini's OpenAPI subset); `tool_choice`: auto -> AUTO, none -> NONE, required -> ANY, a named
 * function -> ANY restricted to that name, `allowed_tools` -> AUTO/ANY restricted to those names.
 */

interface FunctionTool {
  type?: unknown;
  function?: { name?: unknown; description?: unknown; parameters?: unknown };
}

type ToolFields = Pick<GeminiRequest, 'tools' | 'toolConfig'>;

function declaration(tool: FunctionTool, index: number): GeminiFunctionDeclaration {
  if (tool.type !== 'function') throw untranslatable(`tools[${index}].type`, 'gemini', 'a custom tool');
  const fn = tool.function ?? {};
  const converted: GeminiFunctionDeclaration = { name: String(fn.name) };
  if (typeof fn.description === 'string' && fn.description) converted.description = fn.description;
  if (fn.parameters && typeof fn.parameters === 'object') {
    converted.parametersJsonSchema = fn.parameters as Record<string, unknown>;
  }
  return converted;
}

export function convertTools(tools: unknown, toolChoice: unknown): ToolFields {
  if (!Array.isArray(tools) || tools.length === 0) return {};
  const fields: ToolFields = { tools: [{ functionDeclarations: (tools as FunctionTool[]).map(declaration) }] };
  if (toolChoice === 'none') fields.toolConfig = { functionCallingConfig: { mode: 'NONE' } };
  else if (toolChoice === 'required') fields.toolConfig = { functionCallingConfig: { mode: 'ANY' } };
  else if (toolChoice === 'auto') fields.toolConfig = { functionCallingConfig: { mode: 'AUTO' } };
  else if (toolChoice && typeof toolChoice === 'object') {
    const object = toolChoice as {
      type?: unknown;
      function?: { name?: unknown };
      allowed_tools?: { mode?: unknown; tools?: Array<{ function?: { name?: unknown } }> };
    };
    if (object.type === 'function') {
      fields.toolConfig = {
        functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [String(object.function?.name)] },
      };
    } else if (object.type === 'allowed_tools') {
      fields.toolConfig = {
        functionCallingConfig: {
          mode: object.allowed_tools?.mode === 'required' ? 'ANY' : 'AUTO',
          allowedFunctionNames: (object.allowed_tools?.tools ?? []).map((tool) => String(tool.function?.name)),
        },
      };
    } else {
      throw untranslatable('tool_choice.type', 'gemini', `tool_choice of type '${String(object.type)}'`);
    }
  }
  return fields;
}
