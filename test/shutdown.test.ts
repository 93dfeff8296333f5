import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../src/config/loader.js';
import { openDatabase } from '../src/db/connect.js';
import { runCliJson } from './support/cli.js';
import { createTestDatabase, type TestDatabase } from './support/database.js';
import { type MockUpstream, startMockUpstream } from './support/mock-openai-upstream.js';
import { startServeProcess } from './support/serve-process.js';

/**
 * SIGTERM against the real `switchboard serve` process: in-flight streams finish, queued log rows are written,
 * nothing accepted is lost; past the deadline, streams end with an in-band error and are still logged.
 */

let mock: MockUpstream;
const directories: string[] = [];
const databases: TestDatabase[] = [];

beforeAll(async () => {
  mock = await startMockUpstream();
});

afterAll(async () => {
  await mock.close();
  for (const directory of directories) rmSync(directory, { recursive: true, force: true });
  for (const database of databases) await database.drop();
});

interface Server {
  process: ChildProcess;
  url: string;
  key: string;
  dataDir: string;
  databaseUrl: string | undefined;
  exited: Promise<number | null>;
  configFile: string;
  /** What the process printed. */
  output: string[];
}

async function startServer(extraYaml = ''): Promise<Server> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'switchboard-shutdown-'));
  directories.push(dataDir);
  const database = await createTestDatabase();
  databases.push(database);
  const configFile = path.join(dataDir, 'switchboard.yaml');
  const databaseYaml = database.url ? `database:\n  url: ${database.url}\n` : '';
  writeFileSync(
    configFile,
    `${databaseYaml}server:\n  port: 0\n  data_dir: ${dataDir}\n${extraYaml}\nproviders:\n  - name: mock\n    type: openai\n    base_url: ${mock.baseUrl}\nmodels:\n  - name: slow\n    provider: mock\n    upstream_model: slow-stream\n  - name: fast\n    provider: mock\n    upstream_model: mock\n`,
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
  const serve = await startServeProcess(configFile);
  return {
    process: serve.process,
    url: serve.url,
    key: created.key,
    dataDir,
    databaseUrl: database.url,
    exited: serve.exited,
    configFile,
    output: serve.output,
  };
}

function stream(server: Server, model: string) {
  return openStream(server, model).then((opened) => opened.finished);
}

/**
 * Resolves once the server has answered with its headers (the request is in flight there, so a SIGTERM sent now
 * is one it must drain: sent earlier, on a loaded machine, the request might not have reached it yet).
 */
function openStream(server: Server, model: string) {
  return fetch(`${server.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${server.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, stream: true, messages: [{ role: 'user', content: 'hi' }] }),
  }).then((response) => ({
    finished: response.text().then((text) => ({
      status: response.status,
      id: response.headers.get('x-request-id') as string,
      text,
    })),
  }));
}

async function logRows(server: Server) {
  const raw = {
    server: { data_dir: server.dataDir },
    ...(server.databaseUrl ? { database: { url: server.databaseUrl } } : {}),
  };
  const database = await openDatabase(parseConfig(raw, 'test'));
  try {
    return await database.db
      .selectFrom('request_log')
      .select(['request_id', 'outcome', 'status', 'error_code'])
      .execute();
  } finally {
    await database.close();
  }
}

describe('graceful shutdown (SIGTERM)', () => {
  it('lets in-flight streams finish and writes every queued log row before exiting', async () => {
    // A long flush interval and a big batch keep rows in the queue until shutdown flushes them.
    const server = await startServer('request_log:\n  flush_interval: 60s\n  batch_size: 5000\n');
    const quick = await Promise.all(Array.from({ length: 20 }, () => stream(server, 'fast')));
    const opened = await Promise.all(Array.from({ length: 4 }, () => openStream(server, 'slow')));
    server.process.kill('SIGTERM');
    const finished = await Promise.all(opened.map((slow) => slow.finished));
    expect(await server.exited).toBe(0);
    for (const result of finished) {
      expect(result.status).toBe(200);
      expect(result.text.endsWith('data: [DONE]\n\n')).toBe(true);
      expect(result.text).not.toContain('"error"');
      expect(result.text).toContain('w49');
    }
    const rows = await logRows(server);
    const ids = new Set(rows.map((row) => row.request_id));
    for (const result of [...quick, ...finished]) expect(ids.has(result.id)).toBe(true);
    expect(rows.every((row) => row.outcome === 'success')).toBe(true);
    // On SQLite the rows went through the bundled worker thread: had it failed to start, the server says so.
    expect(server.output.join('\n')).not.toContain('SQLite worker');
  });

  it('past the deadline, cuts streams with an in-band error and still logs them', async () => {
    const server = await startServer('  shutdown_timeout: 700ms\n');
    const opened = await Promise.all(Array.from({ length: 3 }, () => openStream(server, 'slow')));
    server.process.kill('SIGTERM');
    const finished = await Promise.all(opened.map((slow) => slow.finished));
    expect(await server.exited).toBe(0);
    for (const result of finished) {
      expect(result.text).toContain('server_shutting_down');
      expect(result.text.endsWith('data: [DONE]\n\n')).toBe(true);
    }
    const rows = await logRows(server);
    for (const result of finished) {
      const row = rows.find((candidate) => candidate.request_id === result.id);
      expect(row).toMatchObject({ outcome: 'error', error_code: 'server_shutting_down' });
    }
  });
});

describe('SIGKILL', () => {
  it('leaves a database that opens cleanly, with every row flushed before the kill', async () => {
    const server = await startServer('request_log:\n  flush_interval: 100ms\n');
    const early = await Promise.all(Array.from({ length: 10 }, () => stream(server, 'fast')));
    await new Promise((resolve) => setTimeout(resolve, 500));
    // Load in flight at the moment of the kill.
    const inFlight = Array.from({ length: 6 }, () => stream(server, 'slow').catch(() => undefined));
    const quick = Array.from({ length: 20 }, () => stream(server, 'fast').catch(() => undefined));
    await new Promise((resolve) => setTimeout(resolve, 300));
    server.process.kill('SIGKILL');
    await server.exited;
    await Promise.all([...inFlight, ...quick]);

    if (!server.databaseUrl) {
      const { default: Sqlite } = await import('better-sqlite3');
      const file = new Sqlite(path.join(server.dataDir, 'switchboard.db'));
      expect(file.pragma('integrity_check', { simple: true })).toBe('ok');
      file.close();
    }
    const restarted = await startServeProcess(server.configFile);
    try {
      const after = await stream({ ...server, url: restarted.url }, 'fast');
      expect(after.status).toBe(200);
      const ids = new Set((await logRows(server)).map((row) => row.request_id));
      for (const result of early) expect(ids.has(result.id)).toBe(true);
    } finally {
      expect(await restarted.stop()).toBe(0);
    }
  });
});
