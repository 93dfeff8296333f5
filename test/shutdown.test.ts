import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCliJson, switchboardBin } from './support/cli.js';
import { type MockUpstream, startMockUpstream } from './support/mock-openai-upstream.js';

/**
 * SIGTERM against the real `switchboard serve` process: in-flight streams finish, queued log rows are written,
 * nothing accepted is lost; past the deadline, streams end with an in-band error and are still logged.
 */

let mock: MockUpstream;
const directories: string[] = [];

beforeAll(async () => {
  mock = await startMockUpstream();
});

afterAll(async () => {
  await mock.close();
  for (const directory of directories) rmSync(directory, { recursive: true, force: true });
});

interface Server {
  process: ChildProcess;
  url: string;
  key: string;
  dataDir: string;
  exited: Promise<number | null>;
}

async function startServer(extraYaml = ''): Promise<Server> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'switchboard-shutdown-'));
  directories.push(dataDir);
  const configFile = path.join(dataDir, 'switchboard.yaml');
  writeFileSync(
    configFile,
    `server:\n  port: 0\n  data_dir: ${dataDir}\n${extraYaml}\nproviders:\n  - name: mock\n    type: openai\n    base_url: ${mock.baseUrl}\nmodels:\n  - name: slow\n    provider: mock\n    upstream_model: slow-stream\n  - name: fast\n    provider: mock\n    upstream_model: mock\n`,
  );
  await runCliJson(['accounts', 'create', 'acme', '--config', configFile]);
  const created = await runCliJson<{ key: string }>([
    'keys',
    'create',
    '--account',
    'acme',
    '--name',
    'shutdown',
    '--config',
    configFile,
  ]);
  const child = spawn(process.execPath, [switchboardBin, 'serve', '--config', configFile, '--json'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    let buffered = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      for (const line of buffered.split('\n')) {
        if (line.includes('"event":"listening"')) resolve((JSON.parse(line) as { url: string }).url);
      }
    });
    child.on('exit', (code) => reject(new Error(`serve exited early with ${code}`)));
  });
  return { process: child, url, key: created.key, dataDir, exited };
}

function stream(server: Server, model: string) {
  return fetch(`${server.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, stream: true, messages: [{ role: 'user', content: 'hi' }] }),
  }).then(async (response) => ({
    status: response.status,
    id: response.headers.get('x-request-id') as string,
    text: await response.text(),
  }));
}

function logRows(dataDir: string) {
  const database = new Database(path.join(dataDir, 'switchboard.db'), { readonly: true });
  try {
    return database.prepare('select request_id, outcome, status, error_code from request_log').all() as Array<{
      request_id: string;
      outcome: string;
      status: number;
      error_code: string | null;
    }>;
  } finally {
    database.close();
  }
}

describe('graceful shutdown (SIGTERM)', () => {
  it('lets in-flight streams finish and writes every queued log row before exiting', async () => {
    // A long flush interval and a big batch keep rows in the queue until shutdown flushes them.
    const server = await startServer('request_log:\n  flush_interval: 60s\n  batch_size: 5000\n');
    const quick = await Promise.all(Array.from({ length: 20 }, () => stream(server, 'fast')));
    const slow = Array.from({ length: 4 }, () => stream(server, 'slow'));
    await new Promise((resolve) => setTimeout(resolve, 500));
    server.process.kill('SIGTERM');
    const finished = await Promise.all(slow);
    expect(await server.exited).toBe(0);
    for (const result of finished) {
      expect(result.status).toBe(200);
      expect(result.text.endsWith('data: [DONE]\n\n')).toBe(true);
      expect(result.text).not.toContain('"error"');
      expect(result.text).toContain('w49');
    }
    const rows = logRows(server.dataDir);
    const ids = new Set(rows.map((row) => row.request_id));
    for (const result of [...quick, ...finished]) expect(ids.has(result.id)).toBe(true);
    expect(rows.every((row) => row.outcome === 'success')).toBe(true);
  });

  it('past the deadline, cuts streams with an in-band error and still logs them', async () => {
    const server = await startServer('  shutdown_timeout: 700ms\n');
    const slow = Array.from({ length: 3 }, () => stream(server, 'slow'));
    await new Promise((resolve) => setTimeout(resolve, 400));
    server.process.kill('SIGTERM');
    const finished = await Promise.all(slow);
    expect(await server.exited).toBe(0);
    for (const result of finished) {
      expect(result.text).toContain('server_shutting_down');
      expect(result.text.endsWith('data: [DONE]\n\n')).toBe(true);
    }
    const rows = logRows(server.dataDir);
    for (const result of finished) {
      const row = rows.find((candidate) => candidate.request_id === result.id);
      expect(row).toMatchObject({ outcome: 'error', error_code: 'server_shutting_down' });
    }
  });
});
