import type { ApiError } from '../errors/api-error.js';

/**
 * OpenAI's `tool_choice`, read once for the adapters that translate it to their upstream's own form: none, required,
 * auto, one named function, or a set of allowed tools (with a mode of its own).
 */
export type ToolChoice =
  | { kind: 'none' | 'required' | 'auto' }
  | { kind: 'function'; name: string }
  | { kind: 'allowed'; required: boolean; names: string[] };

/** undefined when the request sets none; throws what `untranslatable` returns for a kind the adapters do not know. */
export function readToolChoice(
  toolChoice: unknown,
  untranslatable: (what: string) => ApiError,
): ToolChoice | undefined {
  if (toolChoice === 'none' || toolChoice === 'required' || toolChoice === 'auto') return { kind: toolChoice };
  if (!toolChoice || typeof toolChoice !== 'object') return undefined;
  const object = toolChoice as {
    type?: unknown;
    function?: { name?: unknown };
    allowed_tools?: { mode?: unknown; tools?: Array<{ function?: { name?: unknown } }> };
  };
  if (object.type === 'function') return { kind: 'function', name: String(object.function?.name) };
  if (object.type === 'allowed_tools') {
    return {
      kind: 'allowed',
      required: object.allowed_tools?.mode === 'required',
      names: (object.allowed_tools?.tools ?? []).map((tool) => String(tool.function?.name)),
    };
  }
  throw untranslatable(`tool_choice of type '${String(object.type)}'`);
}

/** The parameters of `names` the request sets (null counts as not set). */
export function parametersSet(request: Readonly<Record<string, unknown>>, names: readonly string[]): string[] {
  const set: string[] = [];
  for (const name of names) if (request[name] !== undefined && request[name] !== null) set.push(name);
  return set;
}
