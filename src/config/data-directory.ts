import { accessSync, constants, mkdirSync, statSync } from 'node:fs';
import path from 'node:path';

/**
 * Creating and checking the directories the gateway writes into (the data directory, the SQLite file's directory,
 * the request-log spill directory), with one-line errors that name the directory and the problem. Node's own
 * `mkdirSync(dir, { recursive: true })` never returns when the file system refuses a directory with ENOENT although
 * its parent exists (`/proc/sb`), so the missing directories are created one at a time here.
 */

/** A directory that cannot be created or written; the message names it and says why. */
export class DirectoryError extends Error {}

/**
 * What an errno means for someone who wanted to create something in `parent`, in words rather than Node's codes
 * (also for a file there: the key secret, the first key's file).
 */
export function reasonOf(error: unknown, parent: string): string {
  const code = (error as NodeJS.ErrnoException).code;
  switch (code) {
    case 'EACCES':
    case 'EPERM':
      return `permission denied: ${userDescription()} may not create entries in ${parent}`;
    case 'EROFS':
      return `${parent} is on a read-only file system`;
    case 'ENOSPC':
      return `no space left on the device of ${parent}`;
    case 'EDQUOT':
      return `the disk quota of ${userDescription()} is used up`;
    // A pseudo file system (/proc, /sys) answers ENOENT for a name it does not allow, although the parent exists.
    case 'ENOENT':
      return `the file system of ${parent} does not allow creating anything there`;
    case 'ENAMETOOLONG':
      return 'the path is too long';
    case 'ELOOP':
      return 'the path has a loop of symbolic links';
    default:
      return code ? `${code}: ${(error as Error).message}` : String(error);
  }
}

export function userDescription(): string {
  return typeof process.getuid === 'function' ? `this user (uid ${process.getuid()})` : 'this user';
}

function statOrUndefined(target: string): ReturnType<typeof statSync> | undefined {
  try {
    return statSync(target);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    // A path through a file ("/etc/hosts/data") is ENOTDIR; the walk up then finds that file and names it.
    if (code === 'ENOTDIR') return undefined;
    throw error;
  }
}

/**
 * Makes sure `directory` exists (creating it and any missing parents with mode 0700) and, with `writable`, that this
 * user may create files in it. `role` names it in messages ("the data directory"). Throws DirectoryError.
 */
export function ensureDirectory(directory: string, role: string, options: { writable?: boolean } = {}): void {
  const target = path.resolve(directory);
  const fail = (reason: string): never => {
    throw new DirectoryError(`cannot use ${target} as ${role}: ${reason}`);
  };
  const missing: string[] = [];
  let existing = target;
  for (;;) {
    let found: ReturnType<typeof statSync> | undefined;
    try {
      found = statOrUndefined(existing);
    } catch (error) {
      fail(reasonOf(error, path.dirname(existing)));
    }
    if (found) {
      if (!found.isDirectory()) {
        fail(existing === target ? 'it is a file, not a directory' : `${existing} is a file, not a directory`);
      }
      break;
    }
    missing.unshift(existing);
    const parent = path.dirname(existing);
    if (parent === existing) break;
    existing = parent;
  }
  for (const entry of missing) {
    try {
      mkdirSync(entry, { mode: 0o700 });
    } catch (error) {
      // Created by another process since it was looked at (two servers starting together): fine if a directory.
      if ((error as NodeJS.ErrnoException).code === 'EEXIST' && statSync(entry).isDirectory()) continue;
      fail(reasonOf(error, path.dirname(entry)));
    }
  }
  if (options.writable) {
    try {
      accessSync(target, constants.W_OK | constants.X_OK);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      fail(
        code === 'EROFS'
          ? 'it is on a read-only file system'
          : `it is not writable by ${userDescription()}: give that user write permission, or choose another directory`,
      );
    }
  }
}
