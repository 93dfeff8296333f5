/**
 * A chat tool call's `arguments` (JSON text) as a `tool_use` input, which must be a JSON object. Models sometimes
 * write something else (broken JSON, an array, nothing at all); the client then gets `{}` rather than a response its
 * SDK cannot parse, and its own tool validation tells the model what was missing.
 */

function parsedObject(text: string): Record<string, unknown> | undefined {
  if (text.trim() === '') return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

export function toolInput(argumentsText: unknown): Record<string, unknown> {
  return (typeof argumentsText === 'string' ? parsedObject(argumentsText) : undefined) ?? {};
}

/** The same as JSON text for an `input_json_delta`: the model's own text when it is an object, else `{}`. */
export function toolInputJson(argumentsText: string): string {
  return parsedObject(argumentsText) ? argumentsText : '{}';
}
