import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  countTopLevelNames,
  skipValue,
  skipWhitespace,
  topLevelMembers,
  walkArray,
  walkObject,
  withMemberAppended,
  withMemberValue,
} from '../../src/json/json-bytes.js';

/**
 * The byte walks against JSON.parse, on generated documents: any JSON value (strings of any Unicode, escapes, nested
 * objects and arrays), written compact, indented, or with random whitespace between tokens.
 */

const whitespace = fc.array(fc.constantFrom(' ', '\n', '\r', '\t'), { maxLength: 3 }).map((chars) => chars.join(''));

/** JSON text for a value with the given whitespace around every token (what JSON.stringify never varies). */
function spaced(value: unknown, gaps: string[]): string {
  let turn = 0;
  const gap = () => gaps[turn++ % gaps.length] ?? '';
  const write = (item: unknown): string => {
    if (Array.isArray(item)) return `[${gap()}${item.map((element) => `${write(element)}${gap()}`).join(`,${gap()}`)}]`;
    if (item !== null && typeof item === 'object') {
      const members = Object.entries(item).map(
        ([name, inner]) => `${JSON.stringify(name)}${gap()}:${gap()}${write(inner)}`,
      );
      return `{${gap()}${members.join(`${gap()},${gap()}`)}${gap()}}`;
    }
    return JSON.stringify(item);
  };
  return `${gap()}${write(value)}${gap()}`;
}

const value = fc.jsonValue({ maxDepth: 6, stringUnit: 'binary' });
const object = fc.dictionary(fc.string({ unit: 'binary' }), value, { maxKeys: 8 });
const layout = fc.oneof(
  fc.constant<'compact' | 'indented' | string[]>('compact'),
  fc.constant<'compact' | 'indented' | string[]>('indented'),
  fc.array(whitespace, { minLength: 1, maxLength: 8 }),
);
const text = (item: unknown, how: 'compact' | 'indented' | string[]) =>
  how === 'compact' ? JSON.stringify(item) : how === 'indented' ? JSON.stringify(item, null, 2) : spaced(item, how);

describe('JSON bytes', () => {
  it('finds every member of an object, its name decoded and its value exactly what JSON.parse reads', () => {
    fc.assert(
      fc.property(object, layout, (generated, how) => {
        const bytes = Buffer.from(text(generated, how));
        const members = topLevelMembers(bytes);
        const parsed = JSON.parse(bytes.toString()) as Record<string, unknown>;
        expect(members?.map((member) => member.name)).toEqual(Object.keys(parsed));
        for (const member of members ?? []) {
          expect(JSON.parse(bytes.toString('utf8', member.valueStart, member.valueEnd))).toEqual(parsed[member.name]);
        }
      }),
      { numRuns: 400 },
    );
  });

  it('walks an object and its arrays in one pass, as JSON.parse reads them (names with an escape refused)', () => {
    fc.assert(
      fc.property(object, layout, (generated, how) => {
        const bytes = Buffer.from(text(generated, how));
        const parsed = JSON.parse(bytes.toString()) as Record<string, unknown>;
        const names: string[] = [];
        const values: unknown[] = [];
        const end = walkObject(bytes, skipWhitespace(bytes, 0), (nameStart, nameEnd, valueStart) => {
          names.push(bytes.toString('utf8', nameStart, nameEnd));
          // An array's elements walked one by one; anything else skipped.
          const valueEnd =
            bytes[valueStart] === 0x5b
              ? walkArray(bytes, valueStart, (elementStart) => skipValue(bytes, elementStart))
              : skipValue(bytes, valueStart);
          values.push(JSON.parse(bytes.toString('utf8', valueStart, valueEnd)));
          return valueEnd;
        });
        const escaped = Object.keys(parsed).some((name) => JSON.stringify(name).includes('\\'));
        if (escaped) expect(end).toBe(-1);
        else {
          expect(skipWhitespace(bytes, end)).toBe(bytes.length);
          expect(names).toEqual(Object.keys(parsed));
          expect(values).toEqual(Object.values(parsed));
        }
      }),
      { numRuns: 400 },
    );
    for (const broken of ['{"a":1,}', '{"a" 1}', '{"a":[1,]}', '{"a":[1 2]}', '{"a":1']) {
      const bytes = Buffer.from(broken);
      const end = walkObject(bytes, 0, (_nameStart, _nameEnd, valueStart) =>
        bytes[valueStart] === 0x5b
          ? walkArray(bytes, valueStart, (elementStart) => skipValue(bytes, elementStart))
          : skipValue(bytes, valueStart),
      );
      expect(end, broken).toBe(-1);
    }
  });

  it('skips a whole value, whatever it holds', () => {
    fc.assert(
      fc.property(value, (generated) => {
        const bytes = Buffer.from(JSON.stringify(generated));
        expect(skipValue(bytes, 0)).toBe(bytes.length);
      }),
      { numRuns: 400 },
    );
  });

  it('vouches for no truncated object', () => {
    fc.assert(
      fc.property(object, fc.nat(), (generated, cut) => {
        const full = JSON.stringify(generated);
        const prefix = full.slice(0, cut % full.length);
        expect(topLevelMembers(Buffer.from(prefix))).toBeUndefined();
      }),
      { numRuns: 400 },
    );
    for (const garbled of [
      '{"a" 1}',
      '{"a":1,}',
      '{"a":1}x',
      '{"a":[1}',
      '{"a":{]}',
      '[1]',
      '"s"',
      '',
      '{,}',
      '{"a":1 "b":2}',
    ]) {
      expect(topLevelMembers(Buffer.from(garbled)), garbled).toBeUndefined();
    }
  });

  it('counts the names of the outermost object and measures nesting, strings skipped', () => {
    fc.assert(
      fc.property(object, layout, (generated, how) => {
        const bytes = Buffer.from(text(generated, how));
        expect(countTopLevelNames(bytes, 1000)).toBe(Object.keys(JSON.parse(bytes.toString())).length);
      }),
      { numRuns: 400 },
    );
    expect(countTopLevelNames(Buffer.from('{"a":[{"b":1}]}'), 3)).toBe(1);
    expect(countTopLevelNames(Buffer.from('{"a":[{"b":[1]}]}'), 3)).toBe(-1);
    expect(countTopLevelNames(Buffer.from(`{"text":"${'['.repeat(500)}"}`), 3)).toBe(1);
    expect(countTopLevelNames(Buffer.from(`{"text":"quote \\" then ${'{'.repeat(500)}"}`), 3)).toBe(1);
    expect(countTopLevelNames(Buffer.from(`{"t":"backslash \\\\", "x":${'['.repeat(10)}${']'.repeat(10)}}`), 5)).toBe(
      -1,
    );
    // Both decode to "model": JSON.parse keeps one member, the bytes name two.
    expect(countTopLevelNames(Buffer.from('{"mod\\u0065l":"allowed","model":"forbidden","messages":[]}'), 10)).toBe(3);
  });

  it('appends a member, and replaces one value, leaving every other byte as it was', () => {
    fc.assert(
      fc.property(object, layout, value, (generated, how, replacement) => {
        const source = text({ ...generated, model: 'original' }, how);
        const bytes = Buffer.from(source);
        const replacementJson = JSON.stringify(replacement);
        const edited = withMemberValue(bytes, 'model', replacementJson);
        // Through JSON text once: -0 is written as 0.
        const expected = JSON.parse(JSON.stringify({ ...JSON.parse(source), model: replacement }));
        expect(JSON.parse(edited?.toString() ?? 'null')).toEqual(expected);
        const start = source.indexOf('"original"');
        expect(edited?.toString()).toBe(`${source.slice(0, start)}${replacementJson}${source.slice(start + 10)}`);
        const appended = withMemberAppended(bytes, Buffer.from('"zz_added":true'));
        expect(JSON.parse(appended?.toString() ?? 'null')).toEqual({ ...JSON.parse(source), zz_added: true });
      }),
      { numRuns: 300 },
    );
    const member = Buffer.from('"x":1');
    expect(withMemberAppended(Buffer.from('{"a":[1,{}]} \n'), member)?.toString()).toBe('{"a":[1,{}],"x":1} \n');
    for (const refused of ['{}', '{ \n }', '[1]', ''])
      expect(withMemberAppended(Buffer.from(refused), member)).toBeUndefined();
    // A name given twice, or not at all: not vouched for.
    expect(withMemberValue(Buffer.from('{"model":"a","model":"b"}'), 'model', '"c"')).toBeUndefined();
    expect(withMemberValue(Buffer.from('{"mod\\u0065l":"a","model":"b"}'), 'model', '"c"')).toBeUndefined();
    expect(withMemberValue(Buffer.from('{"other":1}'), 'model', '"c"')).toBeUndefined();
  });
});
