import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { createAccount } from '../../src/accounts/service.js';
import { parseConfig } from '../../src/config/loader.js';
import { type DatabaseHandle, openDatabase } from '../../src/db/connect.js';
import { loadKeySecret } from '../../src/keys/secret.js';
import { createKey } from '../../src/keys/service.js';
import { runCliJson, switchboardBin, switchboardLauncher } from './cli.js';
import { createTestDatabase, type TestDatabase } from './database.js';
import { waitFor } from './wait.js';

/** A real `switchboard serve` process, started with --json so its URL can be read from stdout. */
export interface ServeProcess {
  process: ChildProcess;
  url: string;
  pid: number;
  /** Everything it printed (JSON log lines on stdout, then stderr), appended as it arrives. */
  output: string[];
  /** Resolves with the exit code (null when a signal ended it) once the process has exited. */
  exited: Promise<number | null>;
  /** Sends `signal` (default SIGTERM) and resolves with the exit code once it has exited. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Starts `serve --config <file> --json` and resolves once it announces that it listens. */
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
  running.add(child);
  const output: string[] = [];
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code) => {
      running.delete(child);
      resolve(code);
    }),
  );
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
    pid: child.pid as number,
    output,
    exited,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** Processes started here and not yet exited, so that `killStrayServes` can end what a failed test left behind. */
const running = new Set<ChildProcess>();
const ownDirectories = new Set<string>();
const ownDatabases = new Set<TestDatabase>();

export interface ServeOptions {
  /**
   * The configuration, shaped like the YAML file (snake_case sections). `server.port` (0) and `server.data_dir` (a
   * fresh temporary directory) are filled in; `database.url` comes from `database` unless given here.
   */
  config?: Record<string, unknown>;
  /** Start on the files of prepareServe or of an earlier process instead (same configuration and data directory). */
  reuse?: ServeFiles;
  /**
   * The database: an engine for a fresh one (dropped by killStrayServes), or one the caller owns; default a fresh one
   * of the project's engine (SQLite in the data directory, or PostgreSQL).
   */
  database?: TestDatabase | 'sqlite' | 'postgres';
  /** Extra environment for the process. */
  env?: Record<string, string>;
  /** Extra command-line arguments (e.g. ['--workers', '2']). */
  args?: string[];
  /** Wait until /readyz answers 200 (default true; false when a dependency is meant to be down at start). */
  ready?: boolean;
  /** Start it as an installed command would be (the bin/switchboard shell launcher). */
  launcher?: boolean;
}

/** The files a `serve` process runs on: written by prepareServe, reused by startServe({ reuse }). */
export interface ServeFiles {
  configFile: string;
  dataDir: string;
  /** postgres:// URL of its database, undefined on SQLite. */
  databaseUrl: string | undefined;
  /** Runs `switchboard <args> --config <its file> --json` and returns the parsed output. */
  cli<T = unknown>(...args: string[]): Promise<T>;
}

/** A started `serve` process with the files it runs on. */
export interface Served extends ServeProcess, ServeFiles {
  /** Sends SIGKILL and resolves once the process is gone. */
  kill(): Promise<number | null>;
}

/**
 * Writes a configuration object, shaped like the YAML file, to `file`: for a command that is given a file and no
 * server (`config check`, a bad file `serve` must refuse). prepareServe writes the file a server runs on.
 */
export function writeConfigFile(file: string, config: Record<string, unknown>): string {
  writeFileSync(file, stringify(config));
  return file;
}

/**
 * Writes the configuration file of ServeOptions.config into a fresh data directory, without starting anything (so
 * accounts and keys can be created before the server starts: a change made while it runs clears its key cache).
 */
export async function prepareServe(options: Pick<ServeOptions, 'config' | 'database'> = {}): Promise<ServeFiles> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'switchboard-serve-'));
  ownDirectories.add(dataDir);
  const given = options.database;
  const database = typeof given === 'object' ? given : await createTestDatabase(given);
  if (typeof given !== 'object') ownDatabases.add(database);
  const raw: Record<string, unknown> = { ...options.config };
  raw.server = { port: 0, host: '127.0.0.1', data_dir: dataDir, ...(raw.server as object | undefined) };
  if (database.url && !raw.database) raw.database = { url: database.url };
  const configFile = writeConfigFile(path.join(dataDir, 'switchboard.yaml'), raw);
  return {
    configFile,
    dataDir,
    databaseUrl: (raw.database as { url?: string } | undefined)?.url,
    cli: (...args) => runCliJson([...args, '--config', configFile]),
  };
}

/** Starts a real `serve` process (the built bundle) from a configuration object, or on earlier files (`reuse`). */
export async function startServe(options: ServeOptions = {}): Promise<Served> {
  // Only the files' fields: `reuse` may be an earlier Served, whose process, url and stop must not shadow the new one's.
  const files: ServeFiles = options.reuse
    ? {
        configFile: options.reuse.configFile,
        dataDir: options.reuse.dataDir,
        databaseUrl: options.reuse.databaseUrl,
        cli: options.reuse.cli,
      }
    : await prepareServe(options);
  const serve = await startServeProcess(files.configFile, options.env, options.args, { launcher: options.launcher });
  const served: Served = { ...serve, ...files, kill: () => serve.stop('SIGKILL') };
  if (options.ready !== false) {
    await waitFor(`${serve.url}/readyz to answer 200`, async () => (await fetch(`${serve.url}/readyz`)).ok);
  }
  return served;
}

/** Opens the database of a served process (or of its files after it exited); close it after use. */
export function openServedDatabase(served: Pick<Served, 'dataDir' | 'databaseUrl'>): Promise<DatabaseHandle> {
  const raw = {
    server: { data_dir: served.dataDir },
    ...(served.databaseUrl ? { database: { url: served.databaseUrl } } : {}),
  };
  return openDatabase(parseConfig(raw, 'test'));
}

/**
 * An account and keys of it in the database of `files`, made with the functions `accounts create` and `keys create`
 * call (cli.test.ts runs those commands), in this process rather than in a CLI process each: for tests whose subject
 * is the server, not the CLI. The keys are hashed with the data directory's secret, as the server reads it.
 */
export async function createAccountWithKeys<const Names extends readonly string[]>(
  files: Pick<ServeFiles, 'dataDir' | 'databaseUrl'>,
  account: string,
  keyNames: Names,
): Promise<{ [Index in keyof Names]: { key: string; id: string } }> {
  const database = await openServedDatabase(files);
  try {
    await createAccount(database.db, { name: account });
    const secret = loadKeySecret(files.dataDir, undefined);
    const keys: Array<{ key: string; id: string }> = [];
    for (const name of keyNames) {
      const created = await createKey(database.db, secret, { account, name });
      keys.push({ key: created.key, id: created.info.id });
    }
    return keys as { [Index in keyof Names]: { key: string; id: string } };
  } finally {
    await database.close();
  }
}

/** The processes `pid` started (a serve primary's workers), as pgrep lists them. */
export function childProcessIds(pid: number): number[] {
  try {
    return execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .map(Number);
  } catch (error) {
    // pgrep exits 1 when nothing matches; anything else (no pgrep, a bad option) must fail the test, not read as "none".
    if ((error as { status?: number }).status === 1) return [];
    throw error;
  }
}

/** Kills every serve process still running and removes the directories and databases startServe created. */
export async function killStrayServes(): Promise<void> {
  const exits = [...running].map(
    (child) => new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.once('exit', resolve))),
  );
  for (const child of running) child.kill('SIGKILL');
  await Promise.all(exits);
  for (const directory of ownDirectories) rmSync(directory, { recursive: true, force: true });
  ownDirectories.clear();
  for (const database of ownDatabases) await database.drop();
  ownDatabases.clear();
}
