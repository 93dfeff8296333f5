import { closeSync, openSync, readSync } from 'node:fs';
import { userDescription } from './data-directory.js';

/**
 * Reads a configuration file, at most `maxConfigFileBytes` of it: `--config /dev/zero` (or a log file given by
 * mistake) would otherwise be read until memory runs out. Pipes work (`--config <(render-config)`).
 */

/** Far beyond any real configuration (a few hundred models are ~100 KB), far below what hurts to parse. */
export const maxConfigFileBytes = 4 * 1024 * 1024;

/** Why the file cannot be read, in words; returns the text otherwise. */
export function readConfigFile(file: string): { text: string } | { problem: string } {
  let descriptor: number;
  try {
    descriptor = openSync(file, 'r');
  } catch (error) {
    return { problem: `cannot read the file: ${reasonOf(error)}` };
  }
  try {
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const chunk = Buffer.allocUnsafe(64 * 1024);
      const read = readSync(descriptor, chunk, 0, chunk.length, null);
      if (read === 0) break;
      total += read;
      if (total > maxConfigFileBytes) {
        return {
          problem: `the file is larger than ${maxConfigFileBytes / 1024 / 1024} MiB: is it a configuration file?`,
        };
      }
      chunks.push(chunk.subarray(0, read));
    }
    const bytes = Buffer.concat(chunks);
    // A NUL never appears in YAML text: a binary file is named as one, rather than as a puzzling syntax error.
    if (bytes.includes(0)) return { problem: 'the file is binary (it holds NUL bytes), not YAML text' };
    return { text: bytes.toString('utf8') };
  } catch (error) {
    return { problem: `cannot read the file: ${reasonOf(error)}` };
  } finally {
    closeSync(descriptor);
  }
}

function reasonOf(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  switch (code) {
    case 'ENOENT':
      return 'there is no such file (ENOENT)';
    case 'EACCES':
    case 'EPERM':
      return `${userDescription()} may not read it (EACCES)`;
    case 'EISDIR':
      return 'it is a directory, not a file (EISDIR)';
    case 'ENOTDIR':
      return 'a part of its path is a file, not a directory (ENOTDIR)';
    default:
      return code ?? String(error);
  }
}
