import { reasoningText } from './reasoning-text.js';
import type { ChatCompletion } from './types.js';

/**
 * Enforces, per stream, the delta rules the SDKs depend on (wire contract §3.2), whatever the upstream or a
 * translator produced: `role` only in a choice's first delta (the Python SDK concatenates repeated strings into
 * "assistantassistant"); a tool call's `id`, `type` and `function.name` only in its first delta, `type: "function"`
 * always there; a `function` object in every tool-call delta (the AI SDK's schema requires it); and `object` always
 * `chat.completion.chunk`.
 * Returns a function that fixes a chunk in place and reports whether it changed anything.
 */
export function createChunkNormalizer(): (chunk: ChatCompletion) => boolean {
  const roleSent = new Set<number>();
  const toolCallsStarted = new Set<string>();
  return (chunk) => {
    let changed = false;
    // Clients tell chunks from other events by it (an upstream may send another, or none).
    if (chunk.object !== 'chat.completion.chunk') {
      chunk.object = 'chat.completion.chunk';
      changed = true;
    }
    for (const choice of chunk.choices) {
      const delta = choice?.delta as Record<string, unknown> | undefined;
      if (!delta) continue;
      if (delta.role !== undefined) {
        if (roleSent.has(choice.index)) {
          delete delta.role;
          changed = true;
        } else {
          roleSent.add(choice.index);
        }
      }
      const toolCalls = delta.tool_calls;
      if (!Array.isArray(toolCalls)) continue;
      for (const call of toolCalls as Array<Record<string, unknown>>) {
        const key = `${choice.index}:${String(call.index)}`;
        let fn = call.function as Record<string, unknown> | undefined;
        if (fn === undefined || fn === null) {
          fn = {};
          call.function = fn;
          changed = true;
        }
        if (toolCallsStarted.has(key)) {
          if (call.id !== undefined) {
            delete call.id;
            changed = true;
          }
          if (call.type !== undefined) {
            delete call.type;
            changed = true;
          }
          if (fn.name !== undefined) {
            delete fn.name;
            changed = true;
          }
        } else {
          toolCallsStarted.add(key);
          if (call.type !== 'function') {
            call.type = 'function';
            changed = true;
          }
          if (fn.arguments === undefined) {
            fn.arguments = '';
            changed = true;
          }
        }
      }
    }
    return changed;
  };
}

/** Whether a chunk carries generated content (the moment "time to first token" measures). */
export function chunkHasContent(chunk: ChatCompletion): boolean {
  for (const choice of chunk.choices) {
    const delta = choice?.delta as Record<string, unknown> | undefined;
    if (!delta) continue;
    if (typeof delta.content === 'string' && delta.content.length > 0) return true;
    if (Array.isArray(delta.tool_calls) && delta.tool_calls.length > 0) return true;
    if (typeof delta.refusal === 'string' && delta.refusal.length > 0) return true;
    if (typeof delta.reasoning_content === 'string' && delta.reasoning_content.length > 0) return true;
  }
  return false;
}

/** Characters of generated text in a chunk or message, for usage estimates. */
export function generatedCharacters(chunk: ChatCompletion): number {
  let characters = 0;
  for (const choice of chunk.choices) {
    const part = (choice?.delta ?? choice?.message) as Record<string, unknown> | undefined;
    if (!part) continue;
    if (typeof part.content === 'string') characters += part.content.length;
    characters += reasoningText(part)?.length ?? 0;
    if (Array.isArray(part.tool_calls)) {
      for (const call of part.tool_calls as Array<{ function?: { name?: unknown; arguments?: unknown } }>) {
        if (typeof call.function?.name === 'string') characters += call.function.name.length;
        if (typeof call.function?.arguments === 'string') characters += call.function.arguments.length;
      }
    }
  }
  return characters;
}
