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

/** The lowest zxcvbn score accepted: 3 is "safely unguessable" (about 10^10 guesses or more). */
export const minimumPasswordScore = 3;

/** What zxcvbn's warning keys mean, for the error message (its English translations come with a 40 MB dictionary). */
const weaknessReasons: Record<string, string> = {
  straightRow: 'it is a row of keys on the keyboard',
  keyPattern: 'it is a short keyboard pattern',
  simpleRepeat: 'it repeats characters like "aaa"',
  extendedRepeat: 'it repeats a pattern like "abcabcabc"',
  sequences: 'it is a common sequence like "abc" or "123"',
  recentYears: 'it holds a recent year',
  dates: 'it holds a date',
  topTen: 'it is one of the ten most used passwords',
  topHundred: 'it is one of the hundred most used passwords',
  common: 'it is a commonly used password',
  similarToCommon: 'it is a commonly used password with small changes',
  wordByItself: 'it is a single word',
  namesByThemselves: 'it is a name',
  commonNames: 'it is a common name',
  userInputs: 'it is made of the e-mail address or the product name',
  pwned: 'it appeared in a data breach',
};

/**
 * Rejects passwords that are too short, absurdly long (hashing a megabyte on every sign-in is a DoS lever), or
 * guessable: zxcvbn-ts estimates the guesses an attacker needs from dictionaries of common passwords, keyboard
 * patterns, repeats, sequences and dates, and the user's own e-mail address. The estimator is built for each check
 * and dropped after it: its ranked dictionaries would otherwise stay in memory for a rare operation.
 */
export async function checkPasswordStrength(
  password: string,
  options: { param?: string; userInputs?: readonly string[] } = {},
): Promise<void> {
  const param = options.param ?? 'password';
  if (password.length < minimumPasswordLength) {
    throw apiError('password_too_short', `passwords are at least ${minimumPasswordLength} characters long`, { param });
  }
  if (password.length > maximumPasswordLength) {
    throw apiError('password_too_long', `passwords are at most ${maximumPasswordLength} characters long`, { param });
  }
  const [{ ZxcvbnFactory }, common] = await Promise.all([
    import('@zxcvbn-ts/core'),
    import('@zxcvbn-ts/language-common'),
  ]);
  const estimator = new ZxcvbnFactory({ dictionary: common.dictionary, graphs: common.adjacencyGraphs });
  // Beyond ~100 characters the estimate only gets slower, not different: such a password is not guessable.
  const result = estimator.check(password.slice(0, 100), [
    'switchboard',
    ...(options.userInputs ?? []).flatMap((input) => [input, ...input.split(/[@.+_-]/).filter(Boolean)]),
  ]);
  if (result.score >= minimumPasswordScore) return;
  const warning = result.feedback.warning;
  const reason = (warning && weaknessReasons[warning]) ?? 'it follows a pattern that is quick to guess';
  throw apiError(
    'password_too_weak',
    `This password is too easy to guess: ${reason}. Use a longer one, e.g. a few unrelated words.`,
    { param },
  );
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
