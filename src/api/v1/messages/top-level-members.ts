import { skipString, skipValue, skipWhitespace } from '../../../openai/outline-completion.js';

/**
 * Where each member of a JSON object's bytes is, without parsing it: names decoded (escapes included, so
 * `"mod\u0065l"` is found as `model`), values as byte ranges. Strings are skipped with Buffer.indexOf, nothing else is
 * decoded. Undefined for anything but an object whose structure checks out to its end (or one nested deeper than the
 * walk follows); callers then fall back to parsing.
 */

export interface MemberSpan {
  name: string;
  /** The value's first byte and the byte after its last. */
  valueStart: number;
  valueEnd: number;
}

const quote = 0x22;
const backslash = 0x5c;
const openBrace = 0x7b;
const closeBrace = 0x7d;
const colon = 0x3a;
const comma = 0x2c;

/** `start` is the name's opening quote, `end` the byte after its closing one. */
function decodeName(body: Buffer, start: number, end: number): string | undefined {
  let escaped = false;
  for (let at = start + 1; at < end - 1 && !escaped; at++) escaped = body[at] === backslash;
  if (!escaped) return body.toString('utf8', start + 1, end - 1);
  try {
    return JSON.parse(body.toString('utf8', start, end)) as string;
  } catch {
    return undefined;
  }
}

export function topLevelMembers(body: Buffer): MemberSpan[] | undefined {
  let index = skipWhitespace(body, 0);
  if (body[index] !== openBrace) return undefined;
  index = skipWhitespace(body, index + 1);
  const members: MemberSpan[] = [];
  if (body[index] === closeBrace) return skipWhitespace(body, index + 1) === body.length ? members : undefined;
  for (;;) {
    if (body[index] !== quote) return undefined;
    const nameEnd = skipString(body, index);
    if (nameEnd === -1) return undefined;
    const name = decodeName(body, index, nameEnd);
    if (name === undefined) return undefined;
    index = skipWhitespace(body, nameEnd);
    if (body[index] !== colon) return undefined;
    const valueStart = skipWhitespace(body, index + 1);
    const valueEnd = skipValue(body, valueStart);
    if (valueEnd === -1) return undefined;
    members.push({ name, valueStart, valueEnd });
    index = skipWhitespace(body, valueEnd);
    if (body[index] === comma) {
      index = skipWhitespace(body, index + 1);
      continue;
    }
    if (body[index] !== closeBrace) return undefined;
    return skipWhitespace(body, index + 1) === body.length ? members : undefined;
  }
}
