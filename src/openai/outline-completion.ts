import type { Usage } from './types.js';

/**
 * Reads, from the bytes of an OpenAI `chat.completion` body, only what the gateway needs when the body goes to the
 * client untouched: that it is a completion (an object whose `choices` is an array), and its `usage`. The rest is
 * walked, not parsed: strings are skipped with Buffer.indexOf (native), nothing is decoded or allocated but the usage
 * object. Measured on this machine for a 1.4 KB completion: ~0.3 µs against ~1.9 µs to decode and JSON.parse it all.
 *
 * The walk checks the body's structure (one object; names, colons, commas; every string, object and array closed;
 * nothing after the end), so a truncated or garbled body is not passed off as a completion. It returns undefined for
 * anything but the plain shape: no `choices` array, no `usage` object, an `error` member, a top-level name with an
 * escape in it (two spellings of one name: let JSON.parse decide which counts). The caller then parses the body
 * whole, and its errors are the ones it always gave.
 */
export function outlineCompletion(body: Buffer): { usage: Usage } | undefined {
  let index = skipWhitespace(body, 0);
  if (body[index] !== openBrace) return undefined;
  index++;
  let usageStart = -1;
  let usageEnd = -1;
  let hasChoices = false;
  let first = true;
  for (;;) {
    index = skipWhitespace(body, index);
    if (first && body[index] === closeBrace) {
      index++;
      break;
    }
    first = false;
    if (body[index] !== quote) return undefined;
    const nameStart = index + 1;
    const nameEnd = skipString(body, index);
    if (nameEnd === -1) return undefined;
    for (let at = nameStart; at < nameEnd - 1; at++) if (body[at] === backslash) return undefined;
    index = skipWhitespace(body, nameEnd);
    if (body[index] !== colon) return undefined;
    const valueStart = skipWhitespace(body, index + 1);
    const valueEnd = skipValue(body, valueStart);
    if (valueEnd === -1) return undefined;
    if (nameIs(body, nameStart, nameEnd - 1, 'usage')) {
      usageStart = valueStart;
      usageEnd = valueEnd;
    } else if (nameIs(body, nameStart, nameEnd - 1, 'choices')) {
      hasChoices = body[valueStart] === openBracket;
    } else if (nameIs(body, nameStart, nameEnd - 1, 'error')) {
      return undefined;
    }
    index = skipWhitespace(body, valueEnd);
    if (body[index] === comma) {
      index++;
      continue;
    }
    if (body[index] === closeBrace) {
      index++;
      break;
    }
    return undefined;
  }
  if (skipWhitespace(body, index) !== body.length) return undefined;
  if (!hasChoices || usageStart === -1 || body[usageStart] !== openBrace) return undefined;
  try {
    return { usage: JSON.parse(body.toString('utf8', usageStart, usageEnd)) as Usage };
  } catch {
    return undefined;
  }
}

const quote = 0x22;
const backslash = 0x5c;
const openBrace = 0x7b;
const closeBrace = 0x7d;
const openBracket = 0x5b;
const closeBracket = 0x5d;
const colon = 0x3a;
const comma = 0x2c;

/** Whether the bytes from `start` to `end` spell `name` (an ASCII name). */
function nameIs(body: Buffer, start: number, end: number, name: string): boolean {
  if (end - start !== name.length) return false;
  for (let index = 0; index < name.length; index++) {
    if (body[start + index] !== name.charCodeAt(index)) return false;
  }
  return true;
}

/** JSON's insignificant whitespace: space, line feed, carriage return, tab. */
export function isJsonWhitespace(byte: number | undefined): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}

export function skipWhitespace(body: Buffer, from: number): number {
  let index = from;
  while (isJsonWhitespace(body[index])) index++;
  return index;
}

/** The index after the string whose opening quote is at `from`; -1 when it never closes. */
export function skipString(body: Buffer, from: number): number {
  let end = from;
  for (;;) {
    end = body.indexOf(quote, end + 1);
    if (end === -1) return -1;
    // Escaped when preceded by an odd number of backslashes.
    let backslashes = 0;
    while (body[end - 1 - backslashes] === backslash) backslashes++;
    if (backslashes % 2 === 0) return end + 1;
  }
}

/** The index after the value starting at `from` (an object, array, string, number or literal); -1 when malformed. */
export function skipValue(body: Buffer, from: number): number {
  const first = body[from];
  if (first === quote) return skipString(body, from);
  if (first === openBrace || first === openBracket) {
    // Brackets must close in the order they opened: the open ones are kept as bits of a number (1 for a brace, 0
    // for a bracket), no array; nesting deeper than 30 is left to JSON.parse. Strings inside are skipped whole.
    let open = 0;
    let depth = 0;
    for (let index = from; index < body.length; index++) {
      const byte = body[index];
      if (byte === quote) {
        const end = skipString(body, index);
        if (end === -1) return -1;
        index = end - 1;
      } else if (byte === openBrace || byte === openBracket) {
        if (++depth > 30) return -1;
        open = (open << 1) | (byte === openBrace ? 1 : 0);
      } else if (byte === closeBrace || byte === closeBracket) {
        if ((open & 1) !== (byte === closeBrace ? 1 : 0)) return -1;
        open >>>= 1;
        if (--depth === 0) return index + 1;
      }
    }
    return -1;
  }
  // A number or a literal (true, false, null): up to the next delimiter.
  let index = from;
  while (index < body.length) {
    const byte = body[index];
    if (byte === comma || byte === closeBrace || byte === closeBracket || isJsonWhitespace(byte)) break;
    index++;
  }
  return index === from ? -1 : index;
}
