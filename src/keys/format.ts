import { createHmac, randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';

/**
 * The API key format: `sk-sb-` + base62(32 random bytes, 43 chars) + base62(CRC32 of the preceding text, 6 chars).
 * The prefix lets secret scanners recognise a leaked Switchboard key; the checksum rejects typos and random strings
 * without touching the database. Keys are stored only as HMAC-SHA256(key, server secret).
 */

export const keyPrefix = 'sk-sb-';
const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const bodyLength = 43;
const checksumLength = 6;
export const keyLength = keyPrefix.length + bodyLength + checksumLength;
const base62Pattern = /^[0-9A-Za-z]+$/;

function toBase62(bytes: Buffer, length: number): string {
  let value = BigInt(`0x${bytes.toString('hex') || '0'}`);
  let text = '';
  while (value > 0n) {
    text = alphabet[Number(value % 62n)] + text;
    value /= 62n;
  }
  return text.padStart(length, '0');
}

/** Base62 of the CRC32 (a 32-bit number fits six base62 digits exactly, so plain arithmetic suffices). */
function checksumOf(text: string): string {
  let value = crc32(text) >>> 0;
  let digits = '';
  for (let index = 0; index < checksumLength; index++) {
    digits = alphabet[value % 62] + digits;
    value = Math.floor(value / 62);
  }
  return digits;
}

/** A new random API key in the Switchboard format. */
export function generateKey(): string {
  const body = keyPrefix + toBase62(randomBytes(32), bodyLength);
  return body + checksumOf(body);
}

/** True when the text has the shape and checksum of a Switchboard key (says nothing about whether it exists). */
export function isWellFormedKey(text: string): boolean {
  if (text.length !== keyLength || !text.startsWith(keyPrefix)) return false;
  const rest = text.slice(keyPrefix.length);
  if (!base62Pattern.test(rest)) return false;
  const body = text.slice(0, keyLength - checksumLength);
  return checksumOf(body) === text.slice(keyLength - checksumLength);
}

/** What is stored and looked up: never the key itself. */
export function hashKey(key: string, secret: Buffer): string {
  return createHmac('sha256', secret).update(key).digest('hex');
}

/** The form shown in lists and logs: prefix and last four characters. */
export function displayForm(key: string): string {
  return `${keyPrefix}…${key.slice(-4)}`;
}

/**
 * A masked echo of a presented credential for error messages, so a client can tell which key it sent without the
 * response ever containing it. Short strings are not echoed at all (the last four would be most of them).
 */
export function maskPresentedKey(presented: string): string {
  if (presented.length < 16) return '(hidden)';
  const prefix = presented.startsWith(keyPrefix) ? keyPrefix : '';
  return `${prefix}…${presented.slice(-4)}`;
}

/** Identifiers for rows: a short kind prefix + 16 base62 characters. */
export function newId(kind: 'acct' | 'key' | 'user' | 'mtok' | 'invite'): string {
  return `${kind}_${toBase62(randomBytes(12), 16).slice(-16)}`;
}
