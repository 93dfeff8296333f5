import { randomBytes } from 'node:crypto';
import type { ChatCompletionRequest, ChatMessage } from '../openai/types.js';

/**
 * Tool-call ids the gateway mints, and the one piece of provider state they carry.
 *
 * Gemini 3 returns a `thoughtSignature` with each function call and refuses the next turn (HTTP 400) unless it is sent
 * back with that call. OpenAI clients round-trip nothing but the tool call's `id`, so the signature travels inside
 * it, base64url-encoded behind a marker (ids stay within `[A-Za-z0-9_-]`, the alphabet Anthropic accepts). Adapters
 * for other providers strip it, so a conversation that moves to another model (a fallback) sends ordinary ids.
 */

const signatureMarker = '__sig_';
const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** `length` random base62 characters after `prefix`. */
export function randomId(prefix: string, length = 24): string {
  const bytes = randomBytes(length);
  let id = prefix;
  for (const byte of bytes) id += alphabet[byte % alphabet.length];
  return id;
}

/** `call_` + 24 random base62 characters, the shape OpenAI's own ids have. */
export function newToolCallId(): string {
  return randomId('call_');
}

export function attachSignature(id: string, signature: string | undefined): string {
  if (!signature) return id;
  return `${id}${signatureMarker}${Buffer.from(signature, 'base64').toString('base64url')}`;
}

export function splitToolCallId(id: string): { id: string; signature: string | undefined } {
  const at = id.indexOf(signatureMarker);
  if (at === -1) return { id, signature: undefined };
  const encoded = id.slice(at + signatureMarker.length);
  return { id: id.slice(0, at), signature: encoded ? Buffer.from(encoded, 'base64url').toString('base64') : undefined };
}

function hasSignature(message: ChatMessage): boolean {
  if (typeof message.tool_call_id === 'string' && message.tool_call_id.includes(signatureMarker)) return true;
  if (!Array.isArray(message.tool_calls)) return false;
  return message.tool_calls.some((call) => typeof call?.id === 'string' && call.id.includes(signatureMarker));
}

/** The request with signatures removed from tool-call ids; the same object when there were none (the usual case). */
export function stripSignatures(request: ChatCompletionRequest): ChatCompletionRequest {
  if (!request.messages.some(hasSignature)) return request;
  const messages = request.messages.map((message) => {
    if (!hasSignature(message)) return message;
    const copy: ChatMessage = { ...message };
    if (typeof copy.tool_call_id === 'string') copy.tool_call_id = splitToolCallId(copy.tool_call_id).id;
    if (Array.isArray(copy.tool_calls)) {
      copy.tool_calls = copy.tool_calls.map((call) =>
        typeof call?.id === 'string' ? { ...call, id: splitToolCallId(call.id).id } : call,
      );
    }
    return copy;
  });
  return { ...request, messages };
}
