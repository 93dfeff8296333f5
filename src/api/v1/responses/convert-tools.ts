import { apiError } from '../../../errors/api-error.js';
import { unsupportedParameter } from './errors.js';
import { createToolNameMap, type ToolName, type ToolNameMap } from './tool-names.js';
import type { FunctionTool, JsonObject, NamespaceTool, ResponsesRequest, ResponsesTool } from './types.js';

/**
 * `tools`, `tool_choice` and `parallel_tool_calls` as chat completions takes them. Flat function tools become chat
 * function tools; the functions of a `namespace` tool become flat ones named by tool-names.ts. Hosted tools
 * (`web_search`, `file_search`, `mcp`, …), `custom` tools and tool types the gateway does not know cannot run on the
 * chat side: they are left out and named in `dropped` (`tools.web_search`), so an agent that offers them keeps
 * working, or refused when the model is set to refuse. Forcing a tool that was left out is always refused, since the
 * answer could not be what was asked for.
 */

export type UnsupportedPolicy = 'drop' | 'refuse';

export interface ChatFunctionTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: JsonObject; strict?: boolean };
}

export interface ConvertedTools {
  tools: ChatFunctionTool[];
  toolChoice: unknown;
  names: ToolNameMap;
  dropped: string[];
}

function chatTool(tool: FunctionTool, chatName: string): ChatFunctionTool {
  const fn: ChatFunctionTool['function'] = { name: chatName };
  if (typeof tool.description === 'string') fn.description = tool.description;
  if (tool.parameters && typeof tool.parameters === 'object') fn.parameters = tool.parameters;
  if (typeof tool.strict === 'boolean') fn.strict = tool.strict;
  return { type: 'function', function: fn };
}

interface Offered {
  tool: FunctionTool;
  namespace: string | undefined;
}

function collect(tools: readonly ResponsesTool[], policy: UnsupportedPolicy, dropped: string[]): Offered[] {
  const offered: Offered[] = [];
  const leaveOut = (type: string, param: string) => {
    if (policy === 'refuse') {
      throw unsupportedParameter(param, `(a tool of type '${type}') cannot run on this model.`);
    }
    dropped.push(`tools.${type}`);
  };
  tools.forEach((tool, index) => {
    if (tool.type === 'function') offered.push({ tool: tool as FunctionTool, namespace: undefined });
    else if (tool.type === 'namespace') {
      const namespace = tool as NamespaceTool;
      namespace.tools.forEach((inner, innerIndex) => {
        if (inner.type === 'function') offered.push({ tool: inner as FunctionTool, namespace: namespace.name });
        else leaveOut(inner.type, `tools[${index}].tools[${innerIndex}]`);
      });
    } else leaveOut(tool.type, `tools[${index}]`);
  });
  return offered;
}

function forcedToolMissing(what: string): never {
  throw apiError(
    'unsupported_value',
    `Invalid 'tool_choice': it requires ${what}, which cannot run on this model (only function tools can).`,
    { param: 'tool_choice' },
  );
}

function findFunction(offered: readonly Offered[], name: string, namespace: unknown): Offered | undefined {
  if (typeof namespace === 'string') {
    return offered.find((entry) => entry.namespace === namespace && entry.tool.name === name);
  }
  const flat = offered.find((entry) => entry.namespace === undefined && entry.tool.name === name);
  if (flat) return flat;
  const namespaced = offered.filter((entry) => entry.tool.name === name);
  return namespaced.length === 1 ? namespaced[0] : undefined;
}

function convertChoice(choice: unknown, offered: readonly Offered[], names: ToolNameMap): unknown {
  if (choice === undefined || choice === null) return undefined;
  if (typeof choice === 'string') {
    if (offered.length > 0) return choice;
    if (choice === 'required') forcedToolMissing('a tool call');
    return undefined;
  }
  const object = choice as { type: string; name?: string; namespace?: unknown; mode?: string; tools?: JsonObject[] };
  if (object.type === 'function') {
    const found = findFunction(offered, String(object.name), object.namespace);
    if (!found) {
      throw apiError(
        'invalid_value',
        `Invalid 'tool_choice.name': no function named '${String(object.name).slice(0, 64)}' is in 'tools'.`,
        { param: 'tool_choice.name' },
      );
    }
    return { type: 'function', function: { name: names.toChat(found.tool.name, found.namespace) } };
  }
  if (object.type === 'allowed_tools') {
    const allowed: Array<{ type: 'function'; function: { name: string } }> = [];
    for (const tool of object.tools ?? []) {
      if (tool.type !== 'function') continue;
      const found = findFunction(offered, String(tool.name), tool.namespace);
      if (found) allowed.push({ type: 'function', function: { name: names.toChat(found.tool.name, found.namespace) } });
    }
    if (allowed.length === 0) {
      if (object.mode === 'required') forcedToolMissing('a call of one of its allowed tools');
      return offered.length > 0 ? 'none' : undefined;
    }
    return { type: 'allowed_tools', allowed_tools: { mode: object.mode, tools: allowed } };
  }
  return forcedToolMissing(`a tool of type '${object.type.slice(0, 64)}'`);
}

export function convertTools(request: ResponsesRequest, policy: UnsupportedPolicy): ConvertedTools {
  const dropped: string[] = [];
  const offered = collect(request.tools ?? [], policy, dropped);
  const toolNames: ToolName[] = offered.map((entry) =>
    entry.namespace === undefined ? { name: entry.tool.name } : { name: entry.tool.name, namespace: entry.namespace },
  );
  const names = createToolNameMap(toolNames);
  const tools = offered.map((entry) => chatTool(entry.tool, names.toChat(entry.tool.name, entry.namespace)));
  return { tools, toolChoice: convertChoice(request.tool_choice, offered, names), names, dropped };
}
