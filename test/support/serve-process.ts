import { type ChildProcess, spawn } from 'node:child_process';
import { switchboardBin, switchboardLauncher } from './cli.js';

/** A real `switchboard serve` process, started with --json so its URL can be read from stdout. */
export interface ServeProcess {
  process: ChildProcess;
  url: string;
  /** Everything it printed (JSON log lines). */
  output: string[];
  exited: Promise<number | null>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export async function startServeProcess(
  configFile: string,
  env: Record<string, string> = {},
  extraArgs: string[] = [],
  /** Start it as an installed command would be (bin/switchboard) instead of `node bin/switchboard.js`. */
  options: { launcher?: boolean } = {},
): Promise<ServeProcess> {
  const args = ['serve', '--config', configFile, '--json', ...extraArgs];
  const [command, commandArgs] = options.launcher
    ? [switchboardLauncher, args]
    : [process.execPath, [switchboardBin, ...args]];
  const child = spawn(command, commandArgs, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  const output: string[] = [];
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    let buffered = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) {
        output.push(line);
        if (line.includes('"event":"listening"')) resolve((JSON.parse(line) as { url: string }).url);
      }
    });
    child.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
    child.on('exit', (code) => reject(new Error(`serve exited early with ${code}:\n${output.join('\n')}`)));
  });
  return {
    process: child,
    url,
    output,
    exited,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null) child.kill(signal);
      return exited;
    },
  };
}
