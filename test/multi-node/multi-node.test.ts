import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessChangesChannel } from '../../src/access/change-feed.js';
import { runCli, runCliJson } from '../support/cli.js';
import { type MockUpstream, startMockUpstream } from '../support/mock-openai-upstream.js';
import { type ServeProcess, startServeProcess } from '../support/serve-process.js';

/**
 * Two real gateway processes sharing one PostgreSQL and one Redis, as in a scaled-out deployment: a shared limit
 * admits the configured number of requests, a revocation is honoured by every node within a second, and every
 * request of every node lands in the one request log. (Runs once, with PostgreSQL whatever the project.)
 */

const requestsPerMinute = 200;
const keyPrefix = `multinode-${randomBytes(4).toString('hex')}:`;
let mock: MockUpstream;
let directory: string;
let configFile: string;
let databaseName: string;
let databaseUrl: string;
const nodes: ServeProcess[] = [];

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: run the tests through npm test (scripts/test.sh)`);
  return value;
}

async function admin<T>(use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: required('SWITCHBOARD_TEST_POSTGRES_URL') });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end();
  }
}

beforeAll(async () => {
  mock = await startMockUpstream();
  directory = mkdtempSync(path.join(tmpdir(), 'switchboard-multi-node-'));
  databaseName = `sbtest_multinode_${randomBytes(4).toString('hex')}`;
  await admin((client) => client.query(`create database ${databaseName}`));
  const url = new URL(required('SWITCHBOARD_TEST_POSTGRES_URL'));
  url.pathname = `/${databaseName}`;
  databaseUrl = url.toString();
  configFile = path.join(directory, 'switchboard.yaml');
  writeFileSync(
    configFile,
    [
      'server:',
      '  port: 0',
      `  data_dir: ${directory}`,
      'database:',
      `  url: ${databaseUrl}`,
      'redis:',
      `  url: ${required('SWITCHBOARD_TEST_REDIS_URL')}`,
      `  key_prefix: "${keyPrefix}"`,
      'keys:',
      // Every node hashes keys with the same secret, and polls the database slowly: the Redis broadcast is
      // what makes a revocation visible within a second.
      `  secret: ${randomBytes(24).toString('hex')}`,
      '  change_poll_interval: 30s',
      'request_log:',
      '  flush_interval: 200ms',
      'providers:',
      '  - name: mock',
      '    type: openai',
      `    base_url: ${mock.baseUrl}`,
      'models:',
      '  - name: mock',
      '    provider: mock',
      '',
    ].join('\n'),
  );
  await runCliJson(['accounts', 'create', 'tenant', '--config', configFile]);
  await runCliJson(['accounts', 'set-limits', 'tenant', '--rpm', String(requestsPerMinute), '--config', configFile]);
  nodes.push(await startServeProcess(configFile), await startServeProcess(configFile));
});

afterAll(async () => {
  for (const node of nodes) expect(await node.stop()).toBe(0);
  await mock.close();
  await admin((client) => client.query(`drop database if exists ${databaseName} with (force)`));
  rmSync(directory, { recursive: true, force: true });
});

async function createKey(name: string): Promise<{ key: string; id: string }> {
  return runCliJson(['keys', 'create', '--account', 'tenant', '--name', name, '--config', configFile]);
}

/** How many connections listen on the access-change channel, once that reaches `expected` (or after 10 s). */
async function waitForSubscribers(expected: number): Promise<number> {
  const redis = new Redis(required('SWITCHBOARD_TEST_REDIS_URL'));
  try {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const [, count] = (await redis.pubsub('NUMSUB', accessChangesChannel(keyPrefix))) as [string, number];
      if (count >= expected || Date.now() > deadline) return count;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    redis.disconnect();
  }
}

function chat(node: ServeProcess, key: string) {
  return fetch(`${node.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'mock', messages: [{ role: 'user', content: 'hi' }] }),
  });
}

describe('two gateway nodes, one PostgreSQL, one Redis', () => {
  const requestIds: string[] = [];

  it(`admits the shared ${requestsPerMinute} requests per minute (±1%) when both nodes are hammered at once`, async () => {
    const { key } = await createKey('hammer');
    const total = 600;
    let next = 0;
    const statuses: number[] = [];
    // 24 concurrent clients per node, all at once.
    const worker = async (node: ServeProcess) => {
      while (next < total) {
        next++;
        const response = await chat(node, key);
        statuses.push(response.status);
        requestIds.push(response.headers.get('x-request-id') as string);
        await response.arrayBuffer();
      }
    };
    await Promise.all(nodes.flatMap((node) => Array.from({ length: 24 }, () => worker(node))));
    const admitted = statuses.filter((status) => status === 200).length;
    expect(statuses.filter((status) => status !== 200 && status !== 429)).toEqual([]);
    expect(Math.abs(admitted - requestsPerMinute)).toBeLessThanOrEqual(requestsPerMinute * 0.01);
  });

  it('honours a revocation on every node within a second', async () => {
    const victim = await createKey('victim');
    // The account's minute is used up: lift its limit for this part.
    await runCliJson(['accounts', 'set-limits', 'tenant', '--rpm', 'none', '--config', configFile]);
    for (const node of nodes) {
      let status = 0;
      const deadline = Date.now() + 3000;
      while (status !== 200 && Date.now() < deadline) status = (await chat(node, victim.key)).status;
      expect(status).toBe(200);
    }
    // Both nodes subscribe in the background at start-up (the poll covers them until then): this test is about the
    // broadcast, so it waits until Redis counts both subscribers.
    const listening = await waitForSubscribers(nodes.length);
    const nodeLogs = () => nodes.map((node, index) => `node ${index}:\n${node.output.join('\n')}`).join('\n');
    expect(listening, nodeLogs()).toBe(nodes.length);
    const revocation = await runCli(['keys', 'revoke', victim.id, '--config', configFile]);
    // The CLI tells every node through Redis; a warning here means it could not (the 30 s poll would be too late).
    expect(revocation.stderr).toBe('');
    const revokedAt = Date.now();
    const seen: number[][] = nodes.map(() => []);
    const refusedAfter = await Promise.all(
      nodes.map(async (node, index) => {
        for (;;) {
          const response = await chat(node, victim.key);
          requestIds.push(response.headers.get('x-request-id') as string);
          seen[index]?.push(response.status);
          await response.arrayBuffer();
          if (response.status === 401) return Date.now() - revokedAt;
          if (Date.now() - revokedAt > 3000) return Number.POSITIVE_INFINITY;
        }
      }),
    );
    const summary = seen.map((statuses) => [...new Set(statuses)].join(',')).join(' / ');
    const redisLines = nodes.map((node) => node.output.filter((line) => /redis|access change/i.test(line)).join('\n'));
    for (const elapsed of refusedAfter) {
      expect(elapsed, `statuses seen per node: ${summary}\n${redisLines.join('\n---\n')}`).toBeLessThan(1000);
    }
  });

  it('has every request of every node in the one request log', async () => {
    const identified = requestIds.filter((id) => id);
    const deadline = Date.now() + 5000;
    let found = 0;
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      while (Date.now() < deadline) {
        const result = await client.query('select count(*)::int as n from request_log where request_id = any($1)', [
          identified,
        ]);
        found = result.rows[0].n;
        if (found >= identified.length) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    } finally {
      await client.end();
    }
    // Refusals of the revoked key are logged too: the key exists, so they belong to its account.
    expect(found).toBeGreaterThanOrEqual(600);
    expect(found).toBe(identified.length);
  });
});
