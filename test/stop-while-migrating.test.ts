import { spawn } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { migrations } from '../src/db/migrations/index.js';
import { switchboardBin } from './support/cli.js';
import {
  childProcessIds,
  killStrayServes,
  openServedDatabase,
  prepareServe,
  startServe,
} from './support/serve-process.js';
import { waitFor } from './support/wait.js';

/**
 * SIGTERM while `serve` migrates a fresh database (held inside its first migration by a test-only pause): the
 * migrations finish as one, the database is closed, and the process exits 0 saying so, never having listened. Under
 * `--workers` no worker is started; the next start finds the database whole and serves.
 */

afterAll(killStrayServes);

/** `signalLogged`: the log line that says the signal was taken, before the migrations are let go on. */
async function stopWhileMigrating(args: string[], signalLogged?: string) {
  const files = await prepareServe();
  const pauseFile = path.join(files.dataDir, 'migration-paused');
  const child = spawn(process.execPath, [switchboardBin, 'serve', '--config', files.configFile, '--json', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, SWITCHBOARD_TEST_MIGRATION_PAUSE_FILE: pauseFile },
  });
  const output: string[] = [];
  child.stdout.on('data', (chunk: Buffer) => output.push(...chunk.toString().split('\n').filter(Boolean)));
  child.stderr.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  try {
    await waitFor('the first migration to pause', () => existsSync(pauseFile));
    child.kill('SIGTERM');
    if (signalLogged)
      await waitFor('the signal to be logged', () => output.some((line) => line.includes(signalLogged)));
    const workersWhileMigrating = childProcessIds(child.pid as number);
    rmSync(pauseFile);
    const result = await exited;
    return { files, output, result, workersWhileMigrating };
  } finally {
    child.kill('SIGKILL');
  }
}

async function appliedMigrations(files: Awaited<ReturnType<typeof prepareServe>>): Promise<number> {
  const handle = await openServedDatabase(files);
  try {
    const { rows } = await sql<{ count: number | string }>`select count(*) as count from kysely_migration`.execute(
      handle.db,
    );
    return Number(rows[0]?.count);
  } finally {
    await handle.close();
  }
}

describe('a stop signal while serve migrates the database', () => {
  it('under --workers: finishes the migrations, closes the database, exits 0 without starting a worker', async () => {
    const { files, output, result, workersWhileMigrating } = await stopWhileMigrating(
      ['--workers', '2'],
      'received signal while preparing the database',
    );
    expect(result, output.join('\n')).toEqual({ code: 0, signal: null });
    expect(workersWhileMigrating).toEqual([]);
    expect(output.some((line) => line.includes('"msg":"stopped before starting the workers"'))).toBe(true);
    expect(output.some((line) => line.includes('"event":"listening"'))).toBe(false);
    // Opening the database does not migrate it again here: every migration was applied before the stop.
    expect(await appliedMigrations(files)).toBe(Object.keys(migrations).length);
    const next = await startServe({ reuse: files, args: ['--workers', '2'] });
    expect((await fetch(`${next.url}/healthz`)).status).toBe(200);
    expect(await next.stop()).toBe(0);
  });

  it('in one process: finishes the migrations, closes the database, exits 0 without listening', async () => {
    // One process takes the signal from its first line on, and acts on it once the migrations are done.
    const { files, output, result } = await stopWhileMigrating([]);
    expect(result, output.join('\n')).toEqual({ code: 0, signal: null });
    expect(output.some((line) => line.includes('"msg":"stopped before listening"'))).toBe(true);
    expect(output.some((line) => line.includes('"msg":"switchboard is listening"'))).toBe(false);
    expect(output.some((line) => line.includes('"event":"listening"'))).toBe(false);
    expect(await appliedMigrations(files)).toBe(Object.keys(migrations).length);
    // No first account was made by the stopped start: the next one makes it, and serves.
    const next = await startServe({ reuse: files });
    expect((await fetch(`${next.url}/healthz`)).status).toBe(200);
    expect(await next.stop()).toBe(0);
  });
});
