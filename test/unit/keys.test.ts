import { describe, expect, it } from 'vitest';
import { allowedModels, buildModelCatalog } from '../../src/access/policy.js';
import { parseConfig } from '../../src/config/loader.js';
import { ApiError } from '../../src/errors/api-error.js';
import { parseAuthorizationHeader } from '../../src/keys/authenticate.js';
import {
  displayForm,
  generateKey,
  hashKey,
  isWellFormedKey,
  keyLength,
  maskPresentedKey,
} from '../../src/keys/format.js';

describe('key format', () => {
  it('generates recognisable keys with a valid checksum', () => {
    const keys = new Set(Array.from({ length: 200 }, generateKey));
    expect(keys.size).toBe(200);
    for (const key of keys) {
      expect(key).toMatch(/^sk-sb-[0-9A-Za-z]{49}$/);
      expect(key.length).toBe(keyLength);
      expect(isWellFormedKey(key)).toBe(true);
    }
  });

  it('rejects typos, truncations and foreign keys without a database', () => {
    const key = generateKey();
    const typo = key.slice(0, 10) + (key[10] === 'x' ? 'y' : 'x') + key.slice(11);
    expect(isWellFormedKey(typo)).toBe(false);
    expect(isWellFormedKey(key.slice(0, -1))).toBe(false);
    expect(isWellFormedKey(`${key}a`)).toBe(false);
    expect(isWellFormedKey('sk-proj-abc')).toBe(false);
    expect(isWellFormedKey(key.replace('sk-sb-', 'sk-xx-'))).toBe(false);
  });

  it('hashes with the server secret and shows only prefix and last four', () => {
    const key = generateKey();
    expect(hashKey(key, Buffer.from('a'.repeat(32)))).not.toBe(hashKey(key, Buffer.from('b'.repeat(32))));
    expect(hashKey(key, Buffer.from('a'.repeat(32)))).toMatch(/^[0-9a-f]{64}$/);
    expect(displayForm(key)).toBe(`sk-sb-…${key.slice(-4)}`);
    expect(maskPresentedKey('short')).toBe('(hidden)');
    expect(maskPresentedKey(key)).toBe(`sk-sb-…${key.slice(-4)}`);
  });
});

describe('Authorization header parsing', () => {
  const failure = (header: string | undefined, xApiKey = false) => {
    try {
      parseAuthorizationHeader(header, xApiKey);
    } catch (error) {
      return error as ApiError;
    }
    throw new Error('expected a failure');
  };

  it('accepts exactly "Bearer <key>"', () => {
    expect(parseAuthorizationHeader('Bearer abc', false)).toBe('abc');
  });

  it('refuses every other form with a 401 saying what was wrong', () => {
    for (const header of [
      undefined,
      '',
      'Bearer',
      'Bearer ',
      'Bearer  abc',
      'Bearer abc ',
      'Bearer a\tb',
      'bearer abc',
      'Basic abc',
      'abc',
    ]) {
      const error = failure(header);
      expect(error).toBeInstanceOf(ApiError);
      expect(error.status).toBe(401);
    }
    expect(failure(undefined, true).message).toContain('x-api-key');
    expect(failure('Token abc').message).toContain("'Token'");
  });
});

describe('access policy', () => {
  const config = parseConfig(
    {
      providers: [{ name: 'p', type: 'openai', base_url: 'http://localhost:1/v1' }],
      models: ['a', 'b', 'c'].map((name) => ({ name, provider: 'p' })),
    },
    'test',
  );
  const catalog = buildModelCatalog(config.models);

  it('intersects configured, account and key models, in catalog order', () => {
    expect(allowedModels(catalog, ['*'], null)).toEqual(['a', 'b', 'c']);
    expect(allowedModels(catalog, ['c', 'a'], null)).toEqual(['a', 'c']);
    expect(allowedModels(catalog, ['*'], ['b'])).toEqual(['b']);
    expect(allowedModels(catalog, ['a'], ['b'])).toEqual([]);
    expect(allowedModels(catalog, ['a', 'ghost'], null)).toEqual(['a']);
  });
});
