// Helpers the benchmark scripts share: a scratch directory and the processes a run starts, cleaned up however it ends;
// the median of a sample; waiting for a started server's "listening" line; reading a process's resident memory.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * A scratch directory (`work`, named from `prefix`) and the list of processes a run starts (`children`), both removed
 * when this process exits, Ctrl-C included: a server left running would load the core the next run measures on. A
 * child is sent its own `stopSignal` if it has one, else `stopSignal`. `spawnTracked` starts a process onto the list
 * with its stdout piped to this one (for its listening line) and its stderr on the terminal.
 */
export function benchWorkspace(prefix, { stopSignal = 'SIGKILL' } = {}) {
  const work = mkdtempSync(path.join(tmpdir(), prefix));
  const children = [];
  process.on('exit', () => {
    for (const child of children) child.kill(child.stopSignal ?? stopSignal);
    rmSync(work, { recursive: true, force: true });
  });
  process.on('SIGINT', () => process.exit(130));
  const spawnTracked = (command, args, options = {}) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'], ...options });
    children.push(child);
    return child;
  };
  return { work, children, spawnTracked };
}

/** The median (the mean of the two middle values for an even count); 0 for no values. */
export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  if (sorted.length === 0) return 0;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/**
 * Resolves with the parsed JSON log line of a `switchboard serve --json` child (or a mock or floor) once it says it is
 * listening. Its output is no longer kept after that: a server run with --trace-gc prints a line per collection.
 */
export function listening(child) {
  return new Promise((resolve, reject) => {
    let buffered = '';
    const read = (data) => {
      buffered += data;
      const line = buffered
        .split('\n')
        .slice(0, -1)
        .find((text) => text.includes('"event":"listening"'));
      if (!line) return;
      child.stdout.off('data', read);
      resolve(JSON.parse(line));
    };
    child.stdout.on('data', read);
    child.on('exit', (code) => reject(new Error(`a benchmark process exited with ${code}`)));
  });
}

/** A process's resident memory (VmRSS), in MB. */
export function rssOf(pid) {
  return Number(readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/)?.[1] ?? 0) / 1024;
}

/**
 * The median of `readings` RSS readings `everyMs` apart, with their lowest and highest. One reading of a busy
 * gateway moves by ±8 MB with where V8's young generation is in its cycle and whether a full collection has just run;
 * the median of a few seconds' readings is steady enough to compare builds and to judge a target by.
 */
export async function rssReadings(pid, { readings = 11, everyMs = 200 } = {}) {
  const values = [];
  for (let reading = 0; reading < readings; reading++) {
    if (reading > 0) await new Promise((resolve) => setTimeout(resolve, everyMs));
    values.push(rssOf(pid));
  }
  return { median: median(values), min: Math.min(...values), max: Math.max(...values) };
}
