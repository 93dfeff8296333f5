import { bytesAre, skipValue, skipWhitespace, walkArray, walkObject } from '../json/json-bytes.js';
import type { Usage } from './types.js';

/** Whether the bytes from `start` to `end` are a whole number (digits, no leading zero, at most 15 of them). */
function isWholeNumber(bytes: Buffer, start: number, end: number): boolean {
  const length = end - start;
  if (length < 1 || length > 15 || (length > 1 && bytes[start] === 0x30)) return false;
  for (let at = start; at < end; at++) {
    const byte = bytes[at] as number;
    if (byte < 0x30 || byte > 0x39) return false;
  }
  return true;
}

/** After `tool_calls` (at `start`) when it is null, or a list of objects each with a `function` object; else -1. */
function walkToolCalls(body: Buffer, start: number): number {
  if (bytesAre(body, start, start + 4, 'null')) return skipValue(body, start);
  return walkArray(body, start, (callStart) => {
    let hasFunction = false;
    const end = walkObject(body, callStart, (nameStart, nameEnd, valueStart) => {
      if (bytesAre(body, nameStart, nameEnd, 'function')) hasFunction = body[valueStart] === 0x7b;
      return skipValue(body, valueStart);
    });
    return hasFunction ? end : -1;
  });
}

/** After a message object (at `start`) whose tool calls, if any, walkToolCalls accepts; else -1. */
function walkMessage(body: Buffer, start: number): number {
  return walkObject(body, start, (nameStart, nameEnd, valueStart) =>
    bytesAre(body, nameStart, nameEnd, 'tool_calls') ? walkToolCalls(body, valueStart) : skipValue(body, valueStart),
  );
}

/**
 * After the choices (the array at `start`) when every one is one the SDKs read as it is: an object with a whole-number
 * `index`, a `finish_reason`, and a `message` object whose tool calls, if any, are objects with a `function` object;
 * else -1. Anything else is parsed (and completed or refused) by the caller.
 */
function walkChoices(body: Buffer, start: number): number {
  return walkArray(body, start, (choiceStart) => {
    let index = false;
    let finish = false;
    let message = false;
    const choiceEnd = walkObject(body, choiceStart, (nameStart, nameEnd, valueStart) => {
      if (bytesAre(body, nameStart, nameEnd, 'message')) {
        const messageEnd = walkMessage(body, valueStart);
        message = messageEnd !== -1;
        return messageEnd;
      }
      const valueEnd = skipValue(body, valueStart);
      // Named twice, the last one counts (as JSON.parse reads it).
      if (bytesAre(body, nameStart, nameEnd, 'index')) index = isWholeNumber(body, valueStart, valueEnd);
      else if (bytesAre(body, nameStart, nameEnd, 'finish_reason')) finish = true;
      return valueEnd;
    });
    return index && finish && message ? choiceEnd : -1;
  });
}

/**
 * Reads, from the bytes of an OpenAI `chat.completion` body, only what the gateway needs when the body goes to the
 * client untouched: that it is a completion (an object whose `object` is "chat.completion" and whose `choices` are
 * ones the SDKs read as they are, walkChoices), and its `usage`. The body is walked once, not parsed (src/json/
 * json-bytes.ts), so a truncated or garbled body is not passed off as a completion. It returns undefined for anything
 * but the plain shape: no `choices`, no `usage` object, an `error` member, one of those named twice (let JSON.parse
 * decide which counts), or a name written with an escape. The caller then parses the body whole, and its errors are
 * the ones it always gave.
 */
export function outlineCompletion(body: Buffer): { usage: Usage } | undefined {
  let usageStart = -1;
  let usageEnd = -1;
  let choices = false;
  let object = false;
  const start = skipWhitespace(body, 0);
  const end = walkObject(body, start, (nameStart, nameEnd, valueStart) => {
    if (bytesAre(body, nameStart, nameEnd, 'choices')) {
      if (choices) return -1;
      choices = true;
      return walkChoices(body, valueStart);
    }
    const valueEnd = skipValue(body, valueStart);
    if (bytesAre(body, nameStart, nameEnd, 'usage')) {
      if (usageStart !== -1 || body[valueStart] !== 0x7b) return -1;
      usageStart = valueStart;
      usageEnd = valueEnd;
    } else if (bytesAre(body, nameStart, nameEnd, 'error')) {
      return -1;
    } else if (bytesAre(body, nameStart, nameEnd, 'object')) {
      // Anything but exactly "chat.completion" is parsed (and corrected) by the caller.
      if (!bytesAre(body, valueStart, valueEnd, '"chat.completion"')) return -1;
      object = true;
    }
    return valueEnd;
  });
  if (end === -1 || skipWhitespace(body, end) !== body.length || !choices || !object || usageStart === -1) {
    return undefined;
  }
  try {
    return { usage: JSON.parse(body.toString('utf8', usageStart, usageEnd)) as Usage };
  } catch {
    return undefined;
  }
}
