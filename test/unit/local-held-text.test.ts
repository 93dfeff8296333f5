import { describe, expect, it } from 'vitest';
import { HeldText, longestStopPrefixAtEnd } from '../../src/providers/local/held-text.js';

const piece = (text: string, id = text) => ({ text, id });
const texts = (pieces: Array<{ text: string }>) => pieces.map((item) => item.text);

describe('text held back for stop sequences', () => {
  it('releases every piece at once without stop sequences', () => {
    const held = new HeldText([]);
    expect(texts(held.push(piece('abc')).release)).toEqual(['abc']);
  });

  it('holds what could start a stop sequence and releases it once it cannot', () => {
    const held = new HeldText(['END']);
    expect(texts(held.push(piece('hello E')).release)).toEqual([]);
    expect(texts(held.push(piece('x')).release)).toEqual(['hello E', 'x']);
    expect(texts(held.push(piece('E')).release)).toEqual([]);
    expect(held.flush().map((item) => item.text)).toEqual(['E']);
  });

  it('stops where a stop sequence begins, cutting the piece it begins in and dropping the rest', () => {
    const held = new HeldText(['END', '\n\n']);
    expect(held.push(piece('one E')).release).toEqual([]);
    const result = held.push(piece('ND two'));
    expect(result.stopped).toBe(true);
    expect(texts(result.release)).toEqual(['one ']);
    const early = new HeldText(['x']);
    const stopped = early.push(piece('abxcd'));
    expect(stopped).toMatchObject({ stopped: true });
    expect(stopped.release).toEqual([{ text: 'ab', id: 'abxcd' }]);
  });

  it('takes the earliest of several stop sequences, even one that spans pieces', () => {
    const held = new HeldText(['later', 'ab']);
    expect(held.push(piece('xa')).release).toEqual([]);
    const result = held.push(piece('b later'));
    expect(result.stopped).toBe(true);
    expect(texts(result.release)).toEqual(['x']);
  });

  it('measures the longest end that a stop sequence starts with', () => {
    expect(longestStopPrefixAtEnd('hello wor', ['world'])).toBe(3);
    expect(longestStopPrefixAtEnd('hello', ['world'])).toBe(0);
    expect(longestStopPrefixAtEnd('abc', ['c', 'bcd'])).toBe(2);
  });
});
