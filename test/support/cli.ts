import { execFile, execFileSync } from 'node:child_process';
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

export interface RunCliOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  input?: string;
  /** A command that runs the rest as another user (unprivileged().prefix). */
  prefix?: readonly string[];
}

export function runCli(args: string[], options: RunCliOptions = {}): Promise<CliResult> {
  const [command, ...prefixArgs] = [...(options.prefix ?? []), process.execPath];
  return new Promise((resolve) => {
    const child = execFile(
      command as string,
      [...prefixArgs, switchboardBin, ...args],
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

/** Runs a command as the unprivileged user `nobody` (uid 65534), or says why that is not possible here. */
export type Unprivileged = { prefix: string[]; uid: number } | { prefix: undefined; skipReason: string };

function commandExists(command: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * Permission errors only show for a user the kernel checks: root may write anywhere and bind any port. Tests of them
 * run the CLI as `nobody` through util-linux's setpriv (or runuser), which only root may use.
 */
export function unprivileged(): Unprivileged {
  if (process.getuid?.() !== 0) return { prefix: undefined, skipReason: 'needs root to run commands as nobody' };
  if (commandExists('setpriv')) {
    return { prefix: ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'], uid: 65534 };
  }
  if (commandExists('runuser')) return { prefix: ['runuser', '-u', 'nobody', '--'], uid: 65534 };
  return { prefix: undefined, skipReason: 'neither setpriv nor runuser (util-linux) is installed' };
}
