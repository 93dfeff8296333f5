import type { ResponsesRequest } from './types.js';

/**
 * The characters of a request's text: for the reservation, and for the usage of a native stream that ended before its
 * upstream reported any (an estimate, like chat's).
 */
export function inputCharacters(request: ResponsesRequest): number {
  let characters = typeof request.instructions === 'string' ? request.instructions.length : 0;
  const input = request.input;
  if (typeof input === 'string') return characters + input.length;
  if (!Array.isArray(input)) return characters;
  for (const item of input) {
    characters += 4;
    const record = item as Record<string, unknown>;
    for (const field of ['content', 'output', 'arguments']) {
      const value = record[field];
      if (typeof value === 'string') characters += value.length;
      else if (Array.isArray(value)) {
        for (const part of value) {
          const text = (part as { text?: unknown } | null)?.text;
          if (typeof text === 'string') characters += text.length;
        }
      }
    }
  }
  return characters;
}
