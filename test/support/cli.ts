import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** The real, built command (npm test builds before the tests run). */
export const switchboardBin = path.join(projectRoot, 'bin', 'switchboard.js');
/** The installed `switchboard` command: a shell launcher that sets glibc's malloc thresholds and execs the above. */
export const switchboardLauncher = path.join(projectRoot, 'bin', 'switchboard');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function runCli(
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string } = {},
): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [switchboardBin, ...args],
      { cwd: options.cwd ?? projectRoot, env: { ...process.env, ...options.env }, timeout: 30_000 },
      (error, stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
      },
    );
    if (options.input !== undefined) child.stdin?.end(options.input);
  });
}

export async function runCliJson<T = unknown>(args: string[], options: Parameters<typeof runCli>[1] = {}): Promise<T> {
  const result = await runCli([...args, '--json'], options);
  if (result.code !== 0) throw new Error(`switchboard ${args.join(' ')} failed (${result.code}): ${result.stderr}`);
  return JSON.parse(result.stdout) as T;
}
