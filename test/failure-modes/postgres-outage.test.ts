import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { switchboardBin } from '../support/cli.js';
import type { TestDatabase } from '../support/database.js';
import { type MockUpstream, startMockUpstream } from '../support/mock-openai-upstream.js';
import { type PrivateServer, startPrivatePostgres } from '../support/private-services.js';
import {
  createAccountWithKeys,
  killStrayServes,
  openServedDatabase,
  prepareServe,
  type Served,
  startServe,
} from '../support/serve-process.js';
import { waitFor } from '../support/wait.js';
import { type ChatResult, chat, metric, mockModels, readiness } from './support.js';

/**
 * docs/operations.md, "The database briefly unavailable": a PostgreSQL server of the test's own is stopped (fast
 * shutdown: every connection cut) and started again under a real `serve` process.
 */

let mock: MockUpstream;
let postgres: PrivateServer;
beforeAll(async () => {
  mock = await startMockUpstream();
  postgres = await startPrivatePostgres();
});
// A test that failed half-way must not leave the next one without its server.
afterEach(async () => {
  await postgres.stop();
  await postgres.start();
});
afterAll(async () => {
  await killStrayServes();
  await postgres?.close();
  await mock.close();
});

/** A database of its own in the private cluster (kept until the cluster goes). */
async function privateDatabase(name: string): Promise<TestDatabase> {
  const client = new pg.Client({ connectionString: postgres.url });
  await client.connect();
  await client.query(`create database ${name}`);
  await client.end();
  const url = new URL(postgres.url);
  url.pathname = `/${name}`;
  return { url: url.toString(), env: {}, drop: async () => {} };
}

async function logRowIds(node: Pick<Served, 'dataDir' | 'databaseUrl'>): Promise<string[]> {
  const database = await openServedDatabase(node);
  try {
    return (await database.db.selectFrom('request_log').select('request_id').execute()).map((row) => row.request_id);
  } finally {
    await database.close();
  }
}

describe('PostgreSQL restarted mid-run', () => {
  it('keeps serving known keys, answers 503 for what needs the database, and writes every queued row once it is back', async () => {
    const files = await prepareServe({
      database: await privateDatabase('outage'),
      config: { request_log: { flush_interval: '50ms' }, ...mockModels(mock) },
    });
    // Created before the server starts: a change while it runs would clear its key cache.
    const [known, unknown, budget] = await createAccountWithKeys(files, 'acme', ['known', 'unknown', 'budget']);
    // A budget is checked against the spending in the log, read once per UTC day: the node's clock (test-only) starts
    // 30 s before midnight, and midnight passes during the outage.
    await files.cli('keys', 'set-limits', budget.id, '--daily-budget', '100');
    const clockFile = path.join(files.dataDir, 'clock-offset');
    const midnight = Math.ceil(Date.now() / 86_400_000) * 86_400_000;
    writeFileSync(clockFile, String(midnight - 30_000 - Date.now()));
    const node = await startServe({
      reuse: files,
      env: { NODE_ENV: 'test', SWITCHBOARD_TEST_CLOCK_FILE: clockFile },
    });
    const before = await chat(node, known.key);
    expect(before.status).toBe(200);
    expect((await chat(node, budget.key)).status).toBe(200);
    await waitFor('the first row to be written', async () => (await logRowIds(node)).includes(before.id));

    await postgres.stop();
    await waitFor('/readyz to report the database', async () => {
      const ready = await readiness(node);
      return ready.status === 503 && ready.body.includes('database');
    });
    // The known key is cached: its requests are served; their rows wait in the queue.
    const during: ChatResult[] = [];
    for (let index = 0; index < 10; index++) during.push(await chat(node, known.key, { stream: index % 2 === 0 }));
    expect(during.map((result) => result.status)).toEqual(Array(10).fill(200));
    // A key this node has never seen must be looked up: a clear 503, not a 500 and not a 401.
    const lookup = await chat(node, unknown.key, { signal: AbortSignal.timeout(20_000) });
    expect(`${lookup.status} ${lookup.code}`).toBe('503 service_unavailable');
    expect(lookup.body).toContain('key store is temporarily unavailable');
    expect(lookup.headers.get('retry-after')).toBe('1');
    // Today's spending, read before the outage, is checked without the database; tomorrow's cannot be read.
    expect((await chat(node, budget.key)).status).toBe(200);
    writeFileSync(clockFile, String(midnight + 1000 - Date.now()));
    const unchecked = await chat(node, budget.key);
    expect(`${unchecked.status} ${unchecked.code}`).toBe('503 limits_unavailable');
    expect(unchecked.headers.get('retry-after')).toBe('1');
    expect(await metric(node, 'switchboard_request_log_queue_depth')).toBeGreaterThanOrEqual(10);

    await postgres.start();
    await waitFor('/readyz to answer 200', async () => (await readiness(node)).status === 200);
    await waitFor(
      'the rows queued during the outage to be written',
      async () => {
        const ids = await logRowIds(node);
        return during.every((result) => ids.includes(result.id)) && ids;
      },
      { timeoutMs: 30_000 },
    );
    const ids = await logRowIds(node);
    expect(new Set(ids).size).toBe(ids.length);
    expect((await chat(node, unknown.key)).status).toBe(200);
    expect((await chat(node, budget.key)).status).toBe(200);
    expect(await node.stop()).toBe(0);
  });
});

const spillFiles = (node: Pick<Served, 'dataDir'>) => {
  try {
    return readdirSync(path.join(node.dataDir, 'request-log-spill')).filter((file) => file.endsWith('.jsonl'));
  } catch {
    return [];
  }
};

/** How many rows each request id has. */
async function rowsPerRequestId(node: Pick<Served, 'dataDir' | 'databaseUrl'>): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const id of await logRowIds(node)) counts.set(id, (counts.get(id) ?? 0) + 1);
  return counts;
}

describe('the request-log spill (docs/operations.md, "Shutdown and crashes")', () => {
  it('at SIGTERM with the database down, spills the queue; the next start writes it; a left-over spill is not written twice', async () => {
    const files = await prepareServe({
      database: await privateDatabase('spill'),
      config: { server: { shutdown_timeout: '1s' }, request_log: { flush_interval: '50ms' }, ...mockModels(mock) },
    });
    const [{ key }] = await createAccountWithKeys(files, 'acme', ['spill']);
    const node = await startServe({ reuse: files });
    const first = await chat(node, key);
    await waitFor('the first row to be written', async () => (await logRowIds(node)).includes(first.id));

    await postgres.stop();
    const during: ChatResult[] = [];
    for (let index = 0; index < 20; index++) during.push(await chat(node, key));
    expect(during.map((result) => `${result.status} ${result.code ?? ''}`)).toEqual(Array(20).fill('200 '));
    expect(await node.stop('SIGTERM')).toBe(0);
    const [spill] = spillFiles(node);
    expect(spill).toBeDefined();
    const spillPath = path.join(node.dataDir, 'request-log-spill', spill as string);
    const spilled = readFileSync(spillPath, 'utf8');
    expect(spilled.trim().split('\n')).toHaveLength(20);

    await postgres.start();
    const restarted = await startServe({ reuse: node });
    expect(spillFiles(node)).toEqual([]);
    let counts = await rowsPerRequestId(node);
    for (const result of [first, ...during]) expect(counts.get(result.id)).toBe(1);
    expect(await restarted.stop()).toBe(0);

    // What a SIGKILL between writing a spill file's rows and removing the file leaves: the file, rows already in.
    writeFileSync(spillPath, spilled, { mode: 0o600 });
    const again = await startServe({ reuse: node });
    expect(spillFiles(node)).toEqual([]);
    counts = await rowsPerRequestId(node);
    for (const result of [first, ...during]) expect(counts.get(result.id)).toBe(1);
    expect(counts.size).toBe(21);
    expect(await again.stop()).toBe(0);
  });

  it('a SIGKILL in the middle of writing a spill: the next start writes the rest, nothing twice', async () => {
    const files = await prepareServe({
      database: await privateDatabase('spillkill'),
      // Small batches make the recovery of a big file long enough to be killed in the middle of it.
      config: {
        server: { shutdown_timeout: '1s' },
        request_log: { flush_interval: '50ms', batch_size: 10 },
        ...mockModels(mock),
      },
    });
    const [{ key }] = await createAccountWithKeys(files, 'acme', ['spill']);
    const node = await startServe({ reuse: files });
    // The key is looked up (and cached) while the database is there; the next request's row is the one spilled.
    const first = await chat(node, key);
    await waitFor('the first row to be written', async () => (await logRowIds(node)).includes(first.id));
    await postgres.stop();
    const template = await chat(node, key);
    expect(template.status).toBe(200);
    expect(await node.stop('SIGTERM')).toBe(0);
    const [spill] = spillFiles(node);
    expect(spill, node.output.join('\n')).toBeDefined();
    const spillPath = path.join(node.dataDir, 'request-log-spill', spill as string);
    const row = JSON.parse(readFileSync(spillPath, 'utf8').trim()) as Record<string, unknown>;
    expect(row.request_id).toBe(template.id);
    const total = 5000;
    const rows = Array.from({ length: total }, (_, index) =>
      JSON.stringify({ ...row, request_id: `spilled-${index}` }),
    );
    writeFileSync(spillPath, `${rows.join('\n')}\n`, { mode: 0o600 });
    await postgres.start();

    const spilledCount = async () => {
      const database = await openServedDatabase(node);
      try {
        const result = await database.db
          .selectFrom('request_log')
          .select((select) => select.fn.countAll<string>().as('count'))
          .where('request_id', 'like', 'spilled-%')
          .executeTakeFirstOrThrow();
        return Number(result.count);
      } finally {
        await database.close();
      }
    };
    // Started by hand: the spill is written before the server listens, and the kill must land in the middle of it.
    const child = spawn(process.execPath, [switchboardBin, 'serve', '--config', node.configFile, '--json'], {
      stdio: 'ignore',
    });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    const atKill = await waitFor('part of the spill to be written', async () => {
      const count = await spilledCount();
      return count > 0 && count;
    });
    child.kill('SIGKILL');
    await exited;
    expect(atKill).toBeLessThan(total);
    expect(spillFiles(node)).toHaveLength(1);

    const restarted = await startServe({ reuse: node });
    expect(spillFiles(node)).toEqual([]);
    const counts = await rowsPerRequestId(node);
    const spilledIds = [...counts.entries()].filter(([id]) => id.startsWith('spilled-'));
    expect(spilledIds).toHaveLength(total);
    expect(spilledIds.every(([, count]) => count === 1)).toBe(true);
    expect(await restarted.stop()).toBe(0);
  });

  it('a spill file with a damaged line: the server starts, writes the whole rows, and sets the damaged line aside', async () => {
    const files = await prepareServe({ config: mockModels(mock) });
    const row = (index: number) =>
      JSON.stringify({
        request_id: `damaged-${index}`,
        created_at: Date.now(),
        account_id: 'spill-account',
        key_id: 'spill-key',
        key_name: 'spill',
        model: 'mock',
        status: 200,
        outcome: 'success',
        stream: 0,
        latency_ms: 5,
        usage_estimated: 0,
      });
    const spillDir = path.join(files.dataDir, 'request-log-spill');
    mkdirSync(spillDir, { recursive: true });
    // The last line cut short, as a disk failing in the middle of a write would leave it.
    writeFileSync(path.join(spillDir, 'spill-1-1.jsonl'), `${row(1)}\n${row(2)}\n${row(3).slice(0, 40)}`);
    const node = await startServe({ reuse: files });
    expect(spillFiles(node)).toEqual([]);
    const ids = await logRowIds(node);
    expect(ids.filter((id) => id.startsWith('damaged-')).sort()).toEqual(['damaged-1', 'damaged-2']);
    const [aside] = readdirSync(spillDir).filter((file) => file.endsWith('.rejected'));
    expect(readFileSync(path.join(spillDir, aside as string), 'utf8')).toBe(`${row(3).slice(0, 40)}\n`);
    expect(await node.stop()).toBe(0);
  });
});
