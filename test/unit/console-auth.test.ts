import { describe, expect, it } from 'vitest';
import { hashPassword, needsRehash, verifyPassword } from '../../src/users/password.js';
import {
  displaySecretToken,
  generateSecretToken,
  hashSecretToken,
  looksLikeSecretToken,
} from '../../src/users/secret-token.js';
import { csrfTokenFor, isValidCsrfToken } from '../../src/users/sessions.js';
import { SignInLimiter } from '../../src/users/sign-in-limiter.js';

describe('password hashing', () => {
  it('stores a salted scrypt hash that names its cost, and verifies only the right password', async () => {
    const hash = await hashPassword('correct horse battery staple');
    expect(hash).toMatch(/^scrypt\$15\$8\$1\$[A-Za-z0-9+/=]{24}\$[A-Za-z0-9+/=]{44}$/);
    expect(hash).not.toContain('correct horse');
    expect(await verifyPassword('correct horse battery staple', hash)).toBe(true);
    expect(await verifyPassword('correct horse battery stapl', hash)).toBe(false);
    expect(await verifyPassword('', hash)).toBe(false);
    expect(await hashPassword('correct horse battery staple')).not.toBe(hash);
  });

  it('normalises Unicode so the same password typed on different systems matches', async () => {
    const composed = 'caf\u00e9 au lait, bitte';
    const decomposed = 'cafe\u0301 au lait, bitte';
    expect(await verifyPassword(decomposed, await hashPassword(composed))).toBe(true);
  });

  it('verifies hashes of another cost and says they need re-hashing; malformed hashes never verify', async () => {
    const cheap = await hashPassword('a password to check', { log2N: 12, blockSize: 8, parallelization: 1 });
    expect(await verifyPassword('a password to check', cheap)).toBe(true);
    expect(needsRehash(cheap)).toBe(true);
    expect(needsRehash(await hashPassword('a password to check'))).toBe(false);
    for (const broken of ['', 'plain', 'scrypt$15$8$1$abc', 'scrypt$40$8$1$AAAA$AAAA', 'bcrypt$x$y$z$a$b']) {
      expect(await verifyPassword('anything', broken)).toBe(false);
    }
  });
});

describe('secret tokens', () => {
  it('are 256-bit, recognisable by kind, stored only as a hash, displayed by their ends', () => {
    const token = generateSecretToken('management');
    expect(token).toMatch(/^sbm_[\w-]{43}$/);
    expect(looksLikeSecretToken('management', token)).toBe(true);
    expect(looksLikeSecretToken('session', token)).toBe(false);
    expect(looksLikeSecretToken('management', `${token}x`)).toBe(false);
    expect(hashSecretToken(token)).toMatch(/^[0-9a-f]{64}$/);
    expect(displaySecretToken(token)).toBe(`sbm_…${token.slice(-4)}`);
    expect(generateSecretToken('management')).not.toBe(token);
  });

  it('derives CSRF tokens from the session and the server secret', () => {
    const secret = Buffer.from('a server secret of at least 32 characters!!');
    const token = csrfTokenFor('session-a', secret);
    expect(isValidCsrfToken('session-a', secret, token)).toBe(true);
    expect(isValidCsrfToken('session-b', secret, token)).toBe(false);
    expect(isValidCsrfToken('session-a', Buffer.from('another secret of at least 32 characters'), token)).toBe(false);
    expect(isValidCsrfToken('session-a', secret, undefined)).toBe(false);
    expect(isValidCsrfToken('session-a', secret, token.slice(1))).toBe(false);
  });
});

describe('sign-in limiter', () => {
  it('blocks an address after the allowed failures until the window ends', () => {
    const limiter = new SignInLimiter({ maxFailures: 3, windowMs: 60_000 });
    try {
      const start = 1_000_000;
      for (let attempt = 0; attempt < 3; attempt++) {
        expect(limiter.retryAfterSeconds('a@x.test', '10.0.0.1', start)).toBe(0);
        limiter.recordFailure('a@x.test', '10.0.0.1', start);
      }
      expect(limiter.retryAfterSeconds('a@x.test', '10.0.0.2', start + 1000)).toBe(59);
      expect(limiter.retryAfterSeconds('b@x.test', '10.0.0.1', start + 1000)).toBe(0);
      expect(limiter.retryAfterSeconds('a@x.test', '10.0.0.1', start + 60_000)).toBe(0);
    } finally {
      limiter.close();
    }
  });

  it('limits a client spraying many addresses, and a success clears only the address', () => {
    const limiter = new SignInLimiter({ maxFailures: 2, windowMs: 60_000 });
    try {
      for (let index = 0; index < 6; index++) limiter.recordFailure(`user${index}@x.test`, '10.0.0.9', 0);
      expect(limiter.retryAfterSeconds('fresh@x.test', '10.0.0.9', 10)).toBeGreaterThan(0);
      limiter.recordFailure('c@x.test', '10.0.0.3', 0);
      limiter.recordFailure('c@x.test', '10.0.0.4', 0);
      expect(limiter.retryAfterSeconds('c@x.test', '10.0.0.5', 1)).toBeGreaterThan(0);
      limiter.recordSuccess('c@x.test');
      expect(limiter.retryAfterSeconds('c@x.test', '10.0.0.5', 1)).toBe(0);
    } finally {
      limiter.close();
    }
  });

  it('stays bounded in memory', () => {
    const limiter = new SignInLimiter({ maxFailures: 5, windowMs: 60_000, maxEntries: 100 });
    try {
      for (let index = 0; index < 1000; index++)
        limiter.recordFailure(`u${index}@x.test`, `10.1.${index >> 8}.${index & 255}`, 0);
      expect((limiter as unknown as { counters: Map<string, unknown> }).counters.size).toBeLessThanOrEqual(100);
    } finally {
      limiter.close();
    }
  });
});
