import { describe, expect, it } from 'vitest';
import { SseParser } from '../../src/upstream/sse.js';

const bytes = (text: string) => new TextEncoder().encode(text);

describe('SSE parser', () => {
  it('parses data events, ignores comments, keeps event names', () => {
    const parser = new SseParser();
    const events = parser.push(bytes(': keepalive\n\nevent: message_start\ndata: {"a":1}\n\ndata: [DONE]\n\n'));
    expect(events).toEqual([
      { event: 'message_start', data: '{"a":1}' },
      { event: undefined, data: '[DONE]' },
    ]);
  });

  it('handles \\r\\n, \\r and \\n line endings, even split across chunks', () => {
    const parser = new SseParser();
    const events = [
      ...parser.push(bytes('data: one\r')),
      ...parser.push(bytes('\n\r\ndata: two\r\rdata: three\n')),
      ...parser.push(bytes('\n')),
    ];
    expect(events.map((event) => event.data)).toEqual(['one', 'two', 'three']);
  });

  it('joins multi-line data and keeps UTF-8 characters split across chunks', () => {
    const parser = new SseParser();
    const encoded = bytes('data: héllo 🌍\ndata: second line\n\n');
    const events = [];
    for (let index = 0; index < encoded.length; index++) events.push(...parser.push(encoded.slice(index, index + 1)));
    expect(events).toEqual([{ event: undefined, data: 'héllo 🌍\nsecond line' }]);
  });

  it('drops a byte-order mark at the start of the stream only, and replaces invalid bytes as UTF-8 decoding does', () => {
    const parser = new SseParser();
    const encoded = bytes('\uFEFFdata: one\n\ndata: \uFEFFtwo\n\n');
    const events = [...parser.push(encoded.slice(0, 2)), ...parser.push(encoded.slice(2))];
    expect(events.map((event) => event.data)).toEqual(['one', '\uFEFFtwo']);
    const invalid = new Uint8Array([...bytes('data: a'), 0xff, 0xc3, ...bytes('b\n\n')]);
    expect(new SseParser().push(invalid)).toEqual([
      { event: undefined, data: new TextDecoder().decode(invalid).slice(6, -2) },
    ]);
  });

  it('returns a final event without its blank line at the end', () => {
    const parser = new SseParser();
    expect(parser.push(bytes('data: tail'))).toEqual([]);
    expect(parser.end()).toEqual([{ event: undefined, data: 'tail' }]);
  });
});
