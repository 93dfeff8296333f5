/**
 * JSON read and edited as bytes, without parsing: where a request's or an answer's members are, how deep it nests,
 * and small edits (one member's value replaced, one member appended) that leave every other byte as the client or
 * upstream wrote it. Strings are skipped with Buffer.indexOf (native); a quote or backslash byte never occurs inside a
 * multi-byte UTF-8 character, so walking the bytes is walking the text. Every function answers undefined (or -1) for
 * anything it cannot vouch for, and the caller then parses: the answers are those JSON.parse would give
 * (test/unit/json-bytes.test.ts checks that on generated documents).
 */

const quote = 0x22;
const backslash = 0x5c;
const openBrace = 0x7b;
const closeBrace = 0x7d;
const openBracket = 0x5b;
const closeBracket = 0x5d;
const colon = 0x3a;
const comma = 0x2c;

/** Nesting deeper than this is not walked by skipValue (its callers then parse). */
const maxWalkDepth = 30;

/** JSON's insignificant whitespace: space, line feed, carriage return, tab. */
export function isJsonWhitespace(byte: number | undefined): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}

export function skipWhitespace(bytes: Buffer, from: number): number {
  let index = from;
  while (isJsonWhitespace(bytes[index])) index++;
  return index;
}

/** The index after the string whose opening quote is at `from`; -1 when it never closes. */
export function skipString(bytes: Buffer, from: number): number {
  let end = from;
  for (;;) {
    end = bytes.indexOf(quote, end + 1);
    if (end === -1) return -1;
    // Escaped when preceded by an odd number of backslashes.
    let backslashes = 0;
    while (bytes[end - 1 - backslashes] === backslash) backslashes++;
    if (backslashes % 2 === 0) return end + 1;
  }
}

/** The index after the value starting at `from` (object, array, string, number or literal); -1 when malformed. */
export function skipValue(bytes: Buffer, from: number): number {
  const first = bytes[from];
  if (first === quote) return skipString(bytes, from);
  if (first === openBrace || first === openBracket) {
    // Brackets must close in the order they opened: the open ones are kept as bits of a number (1 for a brace).
    let open = 0;
    let depth = 0;
    for (let index = from; index < bytes.length; index++) {
      const byte = bytes[index];
      if (byte === quote) {
        const end = skipString(bytes, index);
        if (end === -1) return -1;
        index = end - 1;
      } else if (byte === openBrace || byte === openBracket) {
        if (++depth > maxWalkDepth) return -1;
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
  while (index < bytes.length) {
    const byte = bytes[index];
    if (byte === comma || byte === closeBrace || byte === closeBracket || isJsonWhitespace(byte)) break;
    index++;
  }
  return index === from ? -1 : index;
}

export interface MemberSpan {
  /** The member's name, decoded (`"mod\u0065l"` is `model`). */
  name: string;
  /** The value's first byte and the byte after its last. */
  valueStart: number;
  valueEnd: number;
}

/** `start` is the name's opening quote, `end` the byte after its closing one. */
function decodeName(bytes: Buffer, start: number, end: number): string | undefined {
  let escaped = false;
  for (let at = start + 1; at < end - 1 && !escaped; at++) escaped = bytes[at] === backslash;
  if (!escaped) return bytes.toString('utf8', start + 1, end - 1);
  try {
    return JSON.parse(bytes.toString('utf8', start, end)) as string;
  } catch {
    return undefined;
  }
}

/**
 * The members of the object these bytes hold, in order (a name given twice is listed twice). Undefined for anything
 * but one object whose structure checks out to its end: names, colons, commas, every string, object and array closed,
 * nothing after it. Values are only delimited: a malformed number or literal inside is left to whoever parses it.
 */
export function topLevelMembers(bytes: Buffer): MemberSpan[] | undefined {
  let index = skipWhitespace(bytes, 0);
  if (bytes[index] !== openBrace) return undefined;
  index = skipWhitespace(bytes, index + 1);
  const members: MemberSpan[] = [];
  if (bytes[index] === closeBrace) return skipWhitespace(bytes, index + 1) === bytes.length ? members : undefined;
  for (;;) {
    if (bytes[index] !== quote) return undefined;
    const nameEnd = skipString(bytes, index);
    if (nameEnd === -1) return undefined;
    const name = decodeName(bytes, index, nameEnd);
    if (name === undefined) return undefined;
    index = skipWhitespace(bytes, nameEnd);
    if (bytes[index] !== colon) return undefined;
    const valueStart = skipWhitespace(bytes, index + 1);
    const valueEnd = skipValue(bytes, valueStart);
    if (valueEnd === -1) return undefined;
    members.push({ name, valueStart, valueEnd });
    index = skipWhitespace(bytes, valueEnd);
    if (bytes[index] === comma) {
      index = skipWhitespace(bytes, index + 1);
      continue;
    }
    if (bytes[index] !== closeBrace) return undefined;
    return skipWhitespace(bytes, index + 1) === bytes.length ? members : undefined;
  }
}

/**
 * Walks the array whose `[` is at `from` in one pass: `element(start)` walks one element (skipValue, or a walk of its
 * own) and returns the index after it, or -1 to stop. Returns the index after the array's `]`, or -1 when stopped or
 * when the structure does not check out.
 */
export function walkArray(bytes: Buffer, from: number, element: (start: number) => number): number {
  if (bytes[from] !== openBracket) return -1;
  let index = skipWhitespace(bytes, from + 1);
  if (bytes[index] === closeBracket) return index + 1;
  for (;;) {
    const valueEnd = element(index);
    if (valueEnd === -1) return -1;
    index = skipWhitespace(bytes, valueEnd);
    if (bytes[index] === comma) {
      index = skipWhitespace(bytes, index + 1);
      continue;
    }
    return bytes[index] === closeBracket ? index + 1 : -1;
  }
}

/**
 * Walks the object whose `{` is at `from` in one pass, without decoding names: `member(nameStart, nameEnd,
 * valueStart)` gets the name's bytes between its quotes, walks the value and returns the index after it, or -1 to
 * stop. Returns the index after the object's `}`, or -1 when stopped, when the structure does not check out, or when a
 * name holds an escape (its bytes would not be its name).
 */
export function walkObject(
  bytes: Buffer,
  from: number,
  member: (nameStart: number, nameEnd: number, valueStart: number) => number,
): number {
  if (bytes[from] !== openBrace) return -1;
  let index = skipWhitespace(bytes, from + 1);
  if (bytes[index] === closeBrace) return index + 1;
  for (;;) {
    if (bytes[index] !== quote) return -1;
    const nameEnd = skipString(bytes, index);
    if (nameEnd === -1) return -1;
    for (let at = index + 1; at < nameEnd - 1; at++) if (bytes[at] === backslash) return -1;
    const colonAt = skipWhitespace(bytes, nameEnd);
    if (bytes[colonAt] !== colon) return -1;
    const valueEnd = member(index + 1, nameEnd - 1, skipWhitespace(bytes, colonAt + 1));
    if (valueEnd === -1) return -1;
    index = skipWhitespace(bytes, valueEnd);
    if (bytes[index] === comma) {
      index = skipWhitespace(bytes, index + 1);
      continue;
    }
    return bytes[index] === closeBrace ? index + 1 : -1;
  }
}

/** Whether the bytes from `start` to `end` are exactly `name` (ASCII). */
export function bytesAre(bytes: Buffer, start: number, end: number, name: string): boolean {
  if (end - start !== name.length) return false;
  for (let at = 0; at < name.length; at++) if (bytes[start + at] !== name.charCodeAt(at)) return false;
  return true;
}

/**
 * One pass over JSON bytes (strings skipped) that counts the names of the top-level object's members and finds nesting
 * deeper than `depthLimit`: the count, or -1 when nested too deep. Malformed input gives some count; JSON.parse,
 * which always follows, reports it.
 */
export function countTopLevelNames(bytes: Buffer, depthLimit: number): number {
  let depth = 0;
  let members = 0;
  let expectName = false;
  const length = bytes.length;
  for (let index = 0; index < length; index++) {
    const byte = bytes[index];
    if (byte === quote) {
      if (depth === 1 && expectName) {
        members++;
        expectName = false;
      }
      const end = skipString(bytes, index);
      if (end === -1) return members;
      index = end - 1;
    } else if (byte === openBrace || byte === openBracket) {
      if (++depth > depthLimit) return -1;
      if (depth === 1) expectName = byte === openBrace;
    } else if (byte === closeBrace || byte === closeBracket) {
      depth--;
    } else if (byte === comma && depth === 1) {
      expectName = true;
    }
  }
  return members;
}

/**
 * The bytes of a JSON object (one that parsed as such, with at least one member) with one more member written before
 * its closing brace; undefined when the bytes do not end as such an object does.
 */
export function withMemberAppended(object: Buffer, member: Buffer): Buffer | undefined {
  let close = object.length - 1;
  while (close >= 0 && isJsonWhitespace(object[close])) close--;
  if (object[close] !== closeBrace) return undefined;
  let last = close - 1;
  while (last >= 0 && isJsonWhitespace(object[last])) last--;
  // "{}" has no member to follow, and anything else before the brace than a value's end is not an object's end.
  if (last < 0 || object[last] === openBrace || object[last] === comma) return undefined;
  return Buffer.concat([object.subarray(0, close), Buffer.from(','), member, object.subarray(close)]);
}

/**
 * The object's bytes with the value of the member `name` replaced by `valueJson`, every other byte unchanged;
 * undefined when the member is absent, named more than once (parsers disagree on which counts) or the bytes are not
 * an object this walk can vouch for.
 */
export function withMemberValue(object: Buffer, name: string, valueJson: string): Buffer | undefined {
  const members = topLevelMembers(object);
  if (!members) return undefined;
  let found: MemberSpan | undefined;
  for (const member of members) {
    if (member.name !== name) continue;
    if (found) return undefined;
    found = member;
  }
  if (!found) return undefined;
  return Buffer.concat([object.subarray(0, found.valueStart), Buffer.from(valueJson), object.subarray(found.valueEnd)]);
}
