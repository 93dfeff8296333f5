import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { apiError } from '../errors/api-error.js';

/**
 * Password hashing with scrypt (node:crypto, no native add-on). The stored form names its parameters,
 * `scrypt$<log2 N>$<r>$<p>$<salt>$<hash>`, so the cost can be raised later and old hashes still verify (and are
 * re-hashed at the next sign-in, see needsRehash).
 */

export interface ScryptCost {
  log2N: number;
  blockSize: number;
  parallelization: number;
}

/** N = 2^15, r = 8: 32 MiB and ~50-100 ms per hash, OWASP's recommended minimum for scrypt. */
export const defaultScryptCost: ScryptCost = { log2N: 15, blockSize: 8, parallelization: 1 };

const keyLength = 32;
export const minimumPasswordLength = 10;
export const maximumPasswordLength = 1024;

function derive(password: string, salt: Buffer, cost: ScryptCost): Promise<Buffer> {
  const N = 2 ** cost.log2N;
  return new Promise((resolve, reject) => {
    scrypt(
      password.normalize('NFKC'),
      salt,
      keyLength,
      // maxmem must exceed 128 * N * r, which at the default cost is just over node's 32 MiB default.
      { N, r: cost.blockSize, p: cost.parallelization, maxmem: 256 * N * cost.blockSize },
      (error, derived) => (error ? reject(error) : resolve(derived)),
    );
  });
}

/** Rejects passwords that are too short or absurdly long (hashing a megabyte on every sign-in is a DoS lever). */
export function checkPasswordStrength(password: string, param = 'password'): void {
  if (password.length < minimumPasswordLength) {
    throw apiError('password_too_short', `passwords are at least ${minimumPasswordLength} characters long`, { param });
  }
  if (password.length > maximumPasswordLength) {
    throw apiError('password_too_long', `passwords are at most ${maximumPasswordLength} characters long`, { param });
  }
}

export async function hashPassword(password: string, cost: ScryptCost = defaultScryptCost): Promise<string> {
  const salt = randomBytes(16);
  const derived = await derive(password, salt, cost);
  return [
    'scrypt',
    cost.log2N,
    cost.blockSize,
    cost.parallelization,
    salt.toString('base64'),
    derived.toString('base64'),
  ].join('$');
}

function parseHash(stored: string): { cost: ScryptCost; salt: Buffer; derived: Buffer } | undefined {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return undefined;
  const [, log2N, blockSize, parallelization, salt, derived] = parts;
  const cost = { log2N: Number(log2N), blockSize: Number(blockSize), parallelization: Number(parallelization) };
  if (!Number.isInteger(cost.log2N) || cost.log2N < 10 || cost.log2N > 22) return undefined;
  if (!Number.isInteger(cost.blockSize) || !Number.isInteger(cost.parallelization)) return undefined;
  return { cost, salt: Buffer.from(salt ?? '', 'base64'), derived: Buffer.from(derived ?? '', 'base64') };
}

/** Constant-time comparison of a password with a stored hash; false for malformed hashes. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parsed = parseHash(stored);
  if (!parsed || parsed.derived.length !== keyLength) return false;
  if (password.length > maximumPasswordLength) return false;
  const derived = await derive(password, parsed.salt, parsed.cost);
  return timingSafeEqual(derived, parsed.derived);
}

/** True when the stored hash was made with a different cost than the current one. */
export function needsRehash(stored: string, cost: ScryptCost = defaultScryptCost): boolean {
  const parsed = parseHash(stored);
  return (
    !parsed ||
    parsed.cost.log2N !== cost.log2N ||
    parsed.cost.blockSize !== cost.blockSize ||
    parsed.cost.parallelization !== cost.parallelization
  );
}
