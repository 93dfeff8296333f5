import { untranslatable } from '../message-content.js';
import { readToolChoice } from '../tool-choice.js';
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
  const read = readToolChoice(toolChoice, (what) => untranslatable('tool_choice.type', 'gemini', what));
  if (read?.kind === 'none') fields.toolConfig = { functionCallingConfig: { mode: 'NONE' } };
  else if (read?.kind === 'required') fields.toolConfig = { functionCallingConfig: { mode: 'ANY' } };
  else if (read?.kind === 'auto') fields.toolConfig = { functionCallingConfig: { mode: 'AUTO' } };
  else if (read?.kind === 'function') {
    fields.toolConfig = { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [read.name] } };
  } else if (read?.kind === 'allowed') {
    fields.toolConfig = {
      functionCallingConfig: { mode: read.required ? 'ANY' : 'AUTO', allowedFunctionNames: read.names },
    };
  }
  return fields;
}
