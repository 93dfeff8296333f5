import { untranslatable } from '../message-content.js';
import { readToolChoice } from '../tool-choice.js';
import { cacheControlOf } from './convert-content.js';
import type { AnthropicTool, AnthropicToolChoice } from './wire-types.js';

/**
 * `tools` and `tool_choice`:
 * auto -> {type:auto}, required -> {type:any}, none -> {type:none}, a named function -> {type:tool,name};
 * `parallel_tool_calls: false` -> `disable_parallel_tool_use: true`; `allowed_tools` narrows the tool list.
 */

interface FunctionTool {
  type?: unknown;
  function?: { name?: unknown; description?: unknown; parameters?: unknown };
  cache_control?: unknown;
}

export interface ConvertedTools {
  tools?: AnthropicTool[];
  toolChoice?: AnthropicToolChoice;
}

const emptySchema = { type: 'object', properties: {} };

function convertTool(tool: FunctionTool, index: number): AnthropicTool {
  if (tool.type !== 'function') throw untranslatable(`tools[${index}].type`, 'anthropic', 'a custom tool');
  const fn = tool.function ?? {};
  const converted: AnthropicTool = {
    name: String(fn.name),
    input_schema:
      fn.parameters && typeof fn.parameters === 'object' ? (fn.parameters as Record<string, unknown>) : emptySchema,
  };
  if (typeof fn.description === 'string' && fn.description) converted.description = fn.description;
  const cache = cacheControlOf(tool.cache_control);
  if (cache) converted.cache_control = cache;
  return converted;
}

export function convertTools(tools: unknown, toolChoice: unknown, parallelToolCalls: unknown): ConvertedTools {
  if (!Array.isArray(tools) || tools.length === 0) return {};
  let converted = (tools as FunctionTool[]).map(convertTool);
  let choice: AnthropicToolChoice | undefined;
  const read = readToolChoice(toolChoice, (what) => untranslatable('tool_choice.type', 'anthropic', what));
  if (read?.kind === 'none') choice = { type: 'none' };
  else if (read?.kind === 'required') choice = { type: 'any' };
  else if (read?.kind === 'auto') choice = { type: 'auto' };
  else if (read?.kind === 'function') choice = { type: 'tool', name: read.name };
  else if (read?.kind === 'allowed') {
    const allowed = new Set(read.names);
    converted = converted.filter((tool) => allowed.has(tool.name));
    choice = { type: read.required ? 'any' : 'auto' };
  }
  if (parallelToolCalls === false && choice?.type !== 'none') {
    choice = { ...(choice ?? { type: 'auto' }), disable_parallel_tool_use: true } as AnthropicToolChoice;
  }
  return choice ? { tools: converted, toolChoice: choice } : { tools: converted };
}
