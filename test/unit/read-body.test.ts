import type { IncomingMessage } from 'node:http';
import { PassThrough } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Cancellation } from '../../src/server/cancellation.js';
import { jsonDepthExceeds, readJsonBody, scanJsonText } from '../../src/server/read-body.js';

describe('JSON depth scan', () => {
  it('counts nesting of objects and arrays, not brackets inside strings', () => {
    expect(jsonDepthExceeds('{"a":[{"b":1}]}', 3)).toBe(false);
    expect(jsonDepthExceeds('{"a":[{"b":[1]}]}', 3)).toBe(true);
    expect(jsonDepthExceeds(`{"text":"${'['.repeat(500)}"}`, 3)).toBe(false);
    expect(jsonDepthExceeds(`{"text":"quote \\" then ${'{'.repeat(500)}"}`, 3)).toBe(false);
    expect(jsonDepthExceeds(`{"text":"backslash \\\\", "x":${'['.repeat(10)}${']'.repeat(10)}}`, 5)).toBe(true);
  });
});

describe('top-level members named in JSON text', () => {
  it('counts the names of the outermost object, not nested ones or string contents', () => {
    expect(scanJsonText('{}', 10)).toBe(0);
    expect(scanJsonText('{"model":"m","messages":[{"role":"user","content":"a, \\"b\\": c"}]}', 10)).toBe(2);
    expect(scanJsonText(' { "a" : 1 , "b" : { "c" : [ "d" , "e" ] } , "f" : "g" } ', 10)).toBe(3);
  });

  it('sees a name repeated, however it is spelled', () => {
    // Both decode to "model": JSON.parse keeps one member, the text names two.
    const text = '{"mod\\u0065l":"allowed","model":"forbidden","messages":[]}';
    expect(scanJsonText(text, 10)).toBe(3);
    expect(Object.keys(JSON.parse(text))).toHaveLength(2);
  });

  it('agrees with JSON.parse on every object without repeated names, compact or indented', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), fc.boolean(), (object, indent) => {
        const text = JSON.stringify(object, null, indent ? 2 : undefined);
        expect(scanJsonText(text, 1000)).toBe(Object.keys(JSON.parse(text)).length);
      }),
      { numRuns: 500 },
    );
  });
});

describe('reading a request body', () => {
  it('leaves no listener on the request once read (it lives as long as the response, a whole stream)', async () => {
    const request = Object.assign(new PassThrough(), { headers: {} }) as unknown as IncomingMessage & PassThrough;
    const cancellation = new Cancellation();
    const read = readJsonBody(request, 1024, cancellation);
    request.end('{"model":"m","messages":[]}');
    expect((await read).value).toEqual({ model: 'm', messages: [] });
    expect(request.listenerCount('data')).toBe(0);
    expect(request.listenerCount('end')).toBe(0);
  });
});
