import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { waitFor, waitUntilRefused } from './wait.js';

/**
 * Redis and PostgreSQL servers of a test's own, as real processes the test can stop, kill and start again on the
 * same port (the shared ones of scripts/test-services.sh must stay up for every other test).
 */

/** A port nothing listens on right now (the OS picks it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** A server process the test controls: `stop` (graceful), `kill` (SIGKILL), `start` again on the same port. */
export interface PrivateServer {
  url: string;
  port: number;
  /** The running server's process id (to freeze it with SIGSTOP, for instance). */
  pid(): number;
  start(): Promise<void>;
  stop(): Promise<void>;
  kill(): Promise<void>;
  /** Stops it and removes its files. */
  close(): Promise<void>;
}

function controlled(
  url: string,
  port: number,
  launch: () => ChildProcess,
  ready: () => Promise<boolean>,
  gracefulSignal: NodeJS.Signals,
  cleanup: () => void,
): PrivateServer {
  let child: ChildProcess | undefined;
  let log = '';
  const end = async (signal: NodeJS.Signals) => {
    const current = child;
    if (!current || current.exitCode !== null || current.signalCode !== null) return;
    const exited = new Promise((resolve) => current.once('exit', resolve));
    current.kill(signal);
    await exited;
    child = undefined;
    await waitUntilRefused(url);
  };
  const server: PrivateServer = {
    url,
    port,
    pid: () => {
      if (!child?.pid) throw new Error(`${url} is not running`);
      return child.pid;
    },
    start: async () => {
      child = launch();
      child.stdout?.on('data', (chunk: Buffer) => (log += chunk.toString()));
      child.stderr?.on('data', (chunk: Buffer) => (log += chunk.toString()));
      const started = child;
      await waitFor(`${url} to accept commands`, async () => {
        if (started.exitCode !== null) throw new Error(`exited with ${started.exitCode}: ${log}`);
        return ready();
      });
    },
    stop: () => end(gracefulSignal),
    kill: () => end('SIGKILL'),
    close: async () => {
      await end('SIGKILL');
      cleanup();
    },
  };
  return server;
}

/** Sends PING over a fresh connection; true when Redis answers PONG. */
async function redisAnswers(port: number): Promise<boolean> {
  const { Redis } = await import('ioredis');
  const client = new Redis({
    port,
    host: '127.0.0.1',
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  client.on('error', () => {});
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

/** Starts a redis-server of the test's own (no persistence) on a free port. */
export async function startPrivateRedis(): Promise<PrivateServer> {
  const port = await freePort();
  const server = controlled(
    `redis://127.0.0.1:${port}`,
    port,
    () =>
      spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    () => redisAnswers(port),
    'SIGTERM',
    () => {},
  );
  await server.start();
  return server;
}

function postgresBin(name: string): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a)) : [];
  for (const version of versions) {
    const file = path.join(root, version, 'bin', name);
    if (existsSync(file)) return file;
  }
  return name;
}

/** PostgreSQL refuses to run as root: as root, run its binaries as the `postgres` user (Debian's package makes it). */
function asPostgresUser(command: string, args: string[]): [string, string[]] {
  if (process.getuid?.() !== 0) return [command, args];
  return ['setpriv', ['--reuid=postgres', '--regid=postgres', '--init-groups', '--', command, ...args]];
}

function run(command: string, args: string[]): Promise<void> {
  const [file, fileArgs] = asPostgresUser(command, args);
  return new Promise((resolve, reject) => {
    const child = spawn(file, fileArgs, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${command} failed (${code}): ${stderr}`))));
  });
}

/**
 * A PostgreSQL cluster of the test's own (initdb into a temporary directory, trust authentication on 127.0.0.1, a
 * free port), with a database `switchboard`. `url` points at that database. `stop` is a fast shutdown (every
 * connection is cut, as when the server restarts).
 */
export async function startPrivatePostgres(): Promise<PrivateServer> {
  const port = await freePort();
  const directory = mkdtempSync(path.join(tmpdir(), 'switchboard-pg-'));
  if (process.getuid?.() === 0) chownSync(directory, Number(execFileSync('id', ['-u', 'postgres']).toString()), 0);
  const dataDir = path.join(directory, 'data');
  await run(postgresBin('initdb'), ['-D', dataDir, '-U', 'postgres', '--auth=trust', '-N', '-E', 'UTF8']);
  const adminUrl = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const server = controlled(
    `postgres://postgres@127.0.0.1:${port}/switchboard`,
    port,
    () => {
      const [file, args] = asPostgresUser(postgresBin('postgres'), [
        '-D',
        dataDir,
        '-p',
        String(port),
        '-k',
        directory,
        '-c',
        'listen_addresses=127.0.0.1',
        '-c',
        'fsync=off',
      ]);
      return spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    },
    async () => {
      const client = new pg.Client({ connectionString: adminUrl });
      client.on('error', () => {});
      try {
        await client.connect();
        await client.query('select 1');
        return true;
      } catch {
        return false;
      } finally {
        await client.end().catch(() => {});
      }
    },
    // SIGINT is PostgreSQL's fast shutdown: connections are cut, the cluster stays consistent.
    'SIGINT',
    () => rmSync(directory, { recursive: true, force: true }),
  );
  await server.start();
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  await client.query('create database switchboard');
  await client.end();
  return server;
}
