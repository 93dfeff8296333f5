import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { userDescription } from './data-directory.js';

/**
 * Reads a configuration file, at most `maxConfigFileBytes` of it: `--config /dev/zero` (or a log file given by
 * mistake) would otherwise be read until memory runs out. Pipes work (`--config <(render-config)`, `/dev/stdin`); a named
 * pipe that nothing writes to is refused rather than waited on forever: it is opened without blocking, and a writer
 * has `pipeWriterWaitMs` to connect.
 */

/** Far beyond any real configuration (a few hundred models are ~100 KB), far below what hurts to parse. */
export const maxConfigFileBytes = 4 * 1024 * 1024;

/** Long enough for a writer started beside the server (`render > fifo & switchboard serve --config fifo`). */
const pipeWriterWaitMs = 2000;
const pollMs = 10;

const pause = (milliseconds: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, milliseconds);

/** Why the file cannot be read, in words; returns the text otherwise. */
export function readConfigFile(file: string): { text: string } | { problem: string } {
  let descriptor: number;
  try {
    // Non-blocking: opening a named pipe for reading would otherwise wait, forever, for a writer.
    descriptor = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    return { problem: `cannot read the file: ${reasonOf(error)}` };
  }
  try {
    const pipe = fstatSync(descriptor).isFIFO();
    const chunks: Buffer[] = [];
    let total = 0;
    let writerSeen = false;
    let waitedMs = 0;
    for (;;) {
      const chunk = Buffer.allocUnsafe(64 * 1024);
      let read: number;
      try {
        read = readSync(descriptor, chunk, 0, chunk.length, null);
      } catch (error) {
        // A writer is connected but has nothing to say yet (or a terminal waits for typing): wait, like `cat`.
        if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error;
        writerSeen = true;
        pause(pollMs);
        continue;
      }
      if (read === 0) {
        // A pipe reads as ended both when its writer has closed and when no writer has connected yet.
        if (pipe && total === 0 && !writerSeen) {
          if (waitedMs < pipeWriterWaitMs) {
            pause(pollMs);
            waitedMs += pollMs;
            continue;
          }
          return { problem: 'it is a pipe and nothing wrote to it (a named pipe needs a writer)' };
        }
        break;
      }
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
