import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The server secret that keys are HMAC-ed with. From configuration (keys.secret, usually `${ENV}`) when given;
 * otherwise generated once into the data directory with owner-only permissions, so the server and the CLI, which
 * both open that directory, hash keys the same way.
 */
export function loadKeySecret(dataDir: string, configured: string | undefined): Buffer {
  if (configured) return Buffer.from(configured, 'utf8');
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const file = path.join(dataDir, 'key-secret');
  try {
    writeFileSync(file, randomBytes(32).toString('base64url'), { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const text = readFileSync(file, 'utf8').trim();
  if (text.length < 32) throw new Error(`the key secret in ${file} is too short; restore it from backup`);
  return Buffer.from(text, 'utf8');
}
