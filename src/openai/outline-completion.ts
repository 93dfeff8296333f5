import { topLevelMembers } from '../json/json-bytes.js';
import type { Usage } from './types.js';

/**
 * Reads, from the bytes of an OpenAI `chat.completion` body, only what the gateway needs when the body goes to the
 * client untouched: that it is a completion (an object whose `object` is "chat.completion" and whose `choices` is an
 * array), and its `usage`. The rest is
 * walked, not parsed (src/json/json-bytes.ts), so a truncated or garbled body is not passed off as a completion. It
 * returns undefined for anything but the plain shape: no `choices` array, no `usage` object, an `error` member, or one
 * of those named twice (let JSON.parse decide which counts). The caller then parses the body whole, and its errors are
 * the ones it always gave.
 */
export function outlineCompletion(body: Buffer): { usage: Usage } | undefined {
  const members = topLevelMembers(body);
  if (!members) return undefined;
  let usage: { start: number; end: number } | undefined;
  let choices = false;
  let object = false;
  for (const member of members) {
    if (member.name === 'usage') {
      if (usage) return undefined;
      usage = { start: member.valueStart, end: member.valueEnd };
    } else if (member.name === 'choices') {
      if (choices) return undefined;
      choices = body[member.valueStart] === 0x5b;
      if (!choices) return undefined;
    } else if (member.name === 'error') {
      return undefined;
    } else if (member.name === 'object') {
      // Anything but exactly "chat.completion" is parsed (and corrected) by the caller.
      if (body.toString('latin1', member.valueStart, member.valueEnd) !== '"chat.completion"') return undefined;
      object = true;
    }
  }
  if (!choices || !object || !usage || body[usage.start] !== 0x7b) return undefined;
  try {
    return { usage: JSON.parse(body.toString('utf8', usage.start, usage.end)) as Usage };
  } catch {
    return undefined;
  }
}
