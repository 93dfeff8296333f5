import { randomBytes } from 'node:crypto';
import { existsSync, linkSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ensureDirectory, reasonOf, userDescription } from '../config/data-directory.js';

/**
 * The server secret that keys are HMAC-ed with. From configuration (keys.secret, usually `${ENV}`) when given;
 * otherwise generated once into the data directory with owner-only permissions, so the server and the CLI, which
 * both open that directory, hash keys the same way.
 */
export function loadKeySecret(dataDir: string, configured: string | undefined): Buffer {
  if (configured) return Buffer.from(configured, 'utf8');
  ensureDirectory(dataDir, 'the data directory');
  const file = path.join(dataDir, 'key-secret');
  if (!existsSync(file)) createSecretFile(file, dataDir);
  let text: string;
  try {
    text = readFileSync(file, 'utf8').trim();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const reason =
      code === 'EACCES'
        ? `${userDescription()} may not read it (is the server run as the user who created it?)`
        : code === 'EISDIR'
          ? 'it is a directory, not a file'
          : reasonOf(error, dataDir);
    throw new Error(`cannot read the key secret ${file}: ${reason}`);
  }
  if (text.length < 32) throw new Error(`the key secret in ${file} is too short; restore it from backup`);
  return Buffer.from(text, 'utf8');
}

/**
 * Written whole under another name, then linked into place, which fails if another process was first: a full disk or
 * a kill mid-write must not leave a short secret behind that every later start would refuse.
 */
function createSecretFile(file: string, dataDir: string): void {
  const partial = `${file}.${process.pid}.partial`;
  const secret = randomBytes(32).toString('base64url');
  try {
    writeFileSync(partial, secret, { mode: 0o600 });
    try {
      linkSync(partial, file);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // A file system without hard links: exclusive creation still keeps a concurrent start's secret.
      if (code === 'EPERM' || code === 'ENOTSUP' || code === 'EOPNOTSUPP') {
        writeFileSync(file, secret, { flag: 'wx', mode: 0o600 });
      } else throw error;
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
      throw new Error(`cannot create the key secret ${file}: ${reasonOf(error, dataDir)}`);
    }
  } finally {
    rmSync(partial, { force: true });
  }
}
