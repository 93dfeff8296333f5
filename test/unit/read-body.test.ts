import { describe, expect, it } from 'vitest';
import { jsonDepthExceeds } from '../../src/server/read-body.js';

describe('JSON depth scan', () => {
  it('counts nesting of objects and arrays, not brackets inside strings', () => {
    expect(jsonDepthExceeds('{"a":[{"b":1}]}', 3)).toBe(false);
    expect(jsonDepthExceeds('{"a":[{"b":[1]}]}', 3)).toBe(true);
    expect(jsonDepthExceeds(`{"text":"${'['.repeat(500)}"}`, 3)).toBe(false);
    expect(jsonDepthExceeds(`{"text":"quote \\" then ${'{'.repeat(500)}"}`, 3)).toBe(false);
    expect(jsonDepthExceeds(`{"text":"backslash \\\\", "x":${'['.repeat(10)}${']'.repeat(10)}}`, 5)).toBe(true);
  });
});
