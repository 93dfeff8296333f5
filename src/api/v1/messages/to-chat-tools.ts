import type { AnthropicTool, CountTokensRequest } from '../../../providers/anthropic/wire-types.js';
import { type TranslationTarget, untranslatable } from './translation-target.js';

/**
 * `tools` and `tool_choice` -> OpenAI function tools:
 * - a custom tool -> `{type: "function", function: {name, description, parameters: input_schema}}` (`strict` kept);
 * - `tool_choice` auto / any / tool / none -> "auto" / "required" / `{type: "function", function: {name}}` / "none";
 *   `disable_parallel_tool_use: true` -> `parallel_tool_calls: false`.
 * A server tool (web search, code execution, web fetch: Anthropic runs them) or a tool with an Anthropic-defined
 * schema (bash, text editor, memory) cannot work on another model: the model would answer without it, so the request
 * is refused with a 400 naming the tool rather than quietly changing the answer.
 */

export interface ChatFunctionTool {
  type: 'function';
  function: { name: string; description?: string; parameters: Record<string, unknown>; strict?: boolean };
}

export interface ChatTools {
  tools?: ChatFunctionTool[];
  tool_choice?: 'auto' | 'required' | 'none' | { type: 'function'; function: { name: string } };
  parallel_tool_calls?: false;
}

function functionTool(tool: AnthropicTool): ChatFunctionTool {
  const converted: ChatFunctionTool = {
    type: 'function',
    function: { name: tool.name, parameters: tool.input_schema },
  };
  if (typeof tool.description === 'string' && tool.description !== '')
    converted.function.description = tool.description;
  const strict = (tool as { strict?: unknown }).strict;
  if (typeof strict === 'boolean') converted.function.strict = strict;
  return converted;
}

export function toChatTools(request: CountTokensRequest, target: TranslationTarget): ChatTools {
  const tools = (request.tools ?? []).map((tool, index) => {
    if (tool.type !== undefined && tool.type !== null && tool.type !== 'custom') {
      return untranslatable(
        `tools.${index}.type`,
        `the tool '${tool.name}' of type '${tool.type}' (run by Anthropic, or defined by Anthropic for its models)`,
        target,
      );
    }
    return functionTool(tool as AnthropicTool);
  });
  // Without tools a tool choice means nothing, and some servers reject one.
  if (tools.length === 0) return {};
  const converted: ChatTools = { tools };
  const choice = request.tool_choice;
  if (!choice) return converted;
  switch (choice.type) {
    case 'auto':
      converted.tool_choice = 'auto';
      break;
    case 'any':
      converted.tool_choice = 'required';
      break;
    case 'tool':
      converted.tool_choice = { type: 'function', function: { name: choice.name } };
      break;
    case 'none':
      converted.tool_choice = 'none';
      return converted;
  }
  if (choice.disable_parallel_tool_use === true) converted.parallel_tool_calls = false;
  return converted;
}
