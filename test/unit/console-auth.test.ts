import { describe, expect, it } from 'vitest';
import { hashPassword, needsRehash, verifyPassword } from '../../src/users/password.js';
import {
  displaySecretToken,
  generateSecretToken,
  hashSecretToken,
  looksLikeSecretToken,
} from '../../src/users/secret-token.js';
import { csrfTokenFor, isValidCsrfToken } from '../../src/users/sessions.js';
import { MemorySignInThrottle } from '../../src/users/sign-in-throttle.js';

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

describe('sign-in throttle', () => {
  const policy = { freeFailures: 3, maxDelayMs: 60_000, forgetAfterMs: 600_000 };

  function throttleAt(start: number, maxEntries?: number) {
    const clock = { now: start };
    const throttle = new MemorySignInThrottle(policy, { now: () => clock.now, maxEntries });
    return { clock, throttle };
  }

  it('answers the first failures at once, then makes the same client wait longer after each one', async () => {
    const { clock, throttle } = throttleAt(1_000_000);
    try {
      for (let attempt = 0; attempt < 3; attempt++) {
        expect(await throttle.beginAttempt('a@x.test', '10.0.0.1')).toBe(0);
      }
      const waits: number[] = [];
      for (let attempt = 0; attempt < 8; attempt++) {
        // Too soon: refused with the wait, and nothing counted.
        const wait = await throttle.beginAttempt('a@x.test', '10.0.0.1');
        expect(await throttle.beginAttempt('a@x.test', '10.0.0.1')).toBe(wait);
        waits.push(wait);
        clock.now += wait * 1000;
        expect(await throttle.beginAttempt('a@x.test', '10.0.0.1')).toBe(0);
      }
      expect(waits).toEqual([1, 2, 4, 8, 16, 32, 60, 60]);
    } finally {
      throttle.close();
    }
  });

  it('never makes another address wait for the failures of one (no lockout of the user)', async () => {
    const { throttle } = throttleAt(0);
    try {
      for (let attempt = 0; attempt < 50; attempt++) throttle.countFailure('a@x.test', '10.0.0.1');
      expect(throttle.waitMs('a@x.test', '10.0.0.1')).toBeGreaterThan(0);
      expect(throttle.waitMs('a@x.test', '10.0.0.2')).toBe(0);
    } finally {
      throttle.close();
    }
  });

  it('slows a client spraying many users, and a success clears only its (client, user) count', async () => {
    const { throttle } = throttleAt(0);
    try {
      for (let index = 0; index < 9; index++) throttle.countFailure(`user${index}@x.test`, '10.0.0.9');
      expect(throttle.waitMs('fresh@x.test', '10.0.0.9')).toBeGreaterThan(0);
      expect(throttle.waitMs('fresh@x.test', '10.0.0.8')).toBe(0);
      for (let attempt = 0; attempt < 3; attempt++) throttle.countFailure('c@x.test', '10.0.0.3');
      expect(throttle.waitMs('c@x.test', '10.0.0.3')).toBeGreaterThan(0);
      await throttle.attemptSucceeded('c@x.test', '10.0.0.3');
      expect(throttle.waitMs('c@x.test', '10.0.0.3')).toBe(0);
    } finally {
      throttle.close();
    }
  });

  it('counts attempts made at once one after the other: only the free ones have their password checked', async () => {
    const { throttle } = throttleAt(0);
    try {
      const answers = await Promise.all(
        Array.from({ length: 40 }, () => throttle.beginAttempt('a@x.test', '10.0.0.1')),
      );
      expect(answers.filter((wait) => wait === 0)).toHaveLength(policy.freeFailures);
      // A right password among them clears the pair and gives the client its attempt back.
      await throttle.attemptSucceeded('a@x.test', '10.0.0.1');
      expect(throttle.waitMs('a@x.test', '10.0.0.1')).toBe(0);
      await throttle.withdrawAttempt('b@x.test', '10.0.0.1');
      expect(throttle.waitMs('b@x.test', '10.0.0.1')).toBe(0);
    } finally {
      throttle.close();
    }
  });

  it('forgets a count after the window', async () => {
    const { clock, throttle } = throttleAt(0);
    try {
      for (let attempt = 0; attempt < 10; attempt++) throttle.countFailure('a@x.test', '10.0.0.1');
      clock.now += policy.forgetAfterMs;
      expect(throttle.waitMs('a@x.test', '10.0.0.1')).toBe(0);
    } finally {
      throttle.close();
    }
  });

  it('stays bounded in memory', async () => {
    const { throttle } = throttleAt(0, 100);
    try {
      for (let index = 0; index < 1000; index++) {
        throttle.countFailure(`u${index}@x.test`, `10.1.${index >> 8}.${index & 255}`);
      }
      expect((throttle as unknown as { records: Map<string, unknown> }).records.size).toBeLessThanOrEqual(100);
    } finally {
      throttle.close();
    }
  });
});
