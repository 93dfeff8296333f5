import { arrayElements, type MemberSpan, topLevelMembers } from '../json/json-bytes.js';
import type { Usage } from './types.js';

const wholeNumber = /^(0|[1-9][0-9]{0,14})$/;

/** Whether `tool_calls` (the value at start..end) is null, or a list of objects each with a `function` object. */
function plainToolCalls(body: Buffer, start: number, end: number): boolean {
  if (body.toString('latin1', start, end) === 'null') return true;
  const calls = arrayElements(body, start, end);
  if (!calls) return false;
  for (const call of calls) {
    const members = topLevelMembers(body.subarray(call.start, call.end));
    const fn = members?.find((member) => member.name === 'function');
    if (!fn || body[call.start + fn.valueStart] !== 0x7b) return false;
  }
  return true;
}

/**
 * Whether every choice is one the SDKs read as it is: an object with a whole-number `index`, a `finish_reason`, and a
 * `message` object whose tool calls, if any, are objects with a `function` object. Anything else is parsed (and
 * corrected or refused) by the caller.
 */
function plainChoices(body: Buffer, start: number, end: number): boolean {
  const choices = arrayElements(body, start, end);
  if (!choices) return false;
  for (const choice of choices) {
    const members = topLevelMembers(body.subarray(choice.start, choice.end));
    if (!members) return false;
    let index: MemberSpan | undefined;
    let message: MemberSpan | undefined;
    let finish = false;
    for (const member of members) {
      if (member.name === 'index') index = member;
      else if (member.name === 'message') message = member;
      else if (member.name === 'finish_reason') finish = true;
    }
    if (!index || !finish || !message) return false;
    const at = choice.start;
    if (!wholeNumber.test(body.toString('latin1', at + index.valueStart, at + index.valueEnd))) return false;
    const messageAt = at + message.valueStart;
    const messageMembers = topLevelMembers(body.subarray(messageAt, at + message.valueEnd));
    if (!messageMembers) return false;
    for (const member of messageMembers) {
      if (member.name !== 'tool_calls') continue;
      if (!plainToolCalls(body, messageAt + member.valueStart, messageAt + member.valueEnd)) return false;
    }
  }
  return true;
}

/**
 * Reads, from the bytes of an OpenAI `chat.completion` body, only what the gateway needs when the body goes to the
 * client untouched: that it is a completion (an object whose `object` is "chat.completion" and whose `choices` is an
 * array of choices the SDKs read as they are, plainChoices), and its `usage`. The rest is
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
      choices = plainChoices(body, member.valueStart, member.valueEnd);
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
