import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessChangesChannel } from '../../src/access/change-feed.js';
import { runCli } from '../support/cli.js';
import { testPostgresUrl, testRedisUrl } from '../support/environment.js';
import { type MockUpstream, startMockUpstream } from '../support/mock-openai-upstream.js';
import {
  killStrayServes,
  prepareServe,
  type Served,
  type ServeFiles,
  type ServeProcess,
  startServe,
} from '../support/serve-process.js';
import { waitFor } from '../support/wait.js';

/**
 * Two real gateway processes sharing one PostgreSQL and one Redis, as in a scaled-out deployment: a shared limit
 * admits the configured number of requests, a revocation reaches every node through Redis, and every
 * request of every node lands in the one request log. (Runs once, with PostgreSQL whatever the project.)
 */

const requestsPerMinute = 200;
const keyPrefix = `multinode-${randomBytes(4).toString('hex')}:`;
let mock: MockUpstream;
let files: ServeFiles;
let databaseName: string;
let databaseUrl: string;
const nodes: Served[] = [];

async function admin<T>(use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: testPostgresUrl() });
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end();
  }
}

beforeAll(async () => {
  mock = await startMockUpstream();
  databaseName = `sbtest_multinode_${randomBytes(4).toString('hex')}`;
  await admin((client) => client.query(`create database ${databaseName}`));
  const url = new URL(testPostgresUrl());
  url.pathname = `/${databaseName}`;
  databaseUrl = url.toString();
  files = await prepareServe({
    config: {
      database: { url: databaseUrl },
      redis: { url: testRedisUrl(), key_prefix: keyPrefix },
      // Every node hashes keys with the same secret, and polls the database slowly (30 s, longer than any wait
      // here): only the Redis broadcast can make a revocation visible to a node during this test.
      keys: { secret: randomBytes(24).toString('hex'), change_poll_interval: '30s' },
      request_log: { flush_interval: '200ms' },
      providers: [{ name: 'mock', type: 'openai', base_url: mock.baseUrl }],
      models: [{ name: 'mock', provider: 'mock' }],
    },
  });
  await files.cli('accounts', 'create', 'tenant');
  await files.cli('accounts', 'set-limits', 'tenant', '--rpm', String(requestsPerMinute));
  nodes.push(await startServe({ reuse: files }), await startServe({ reuse: files }));
});

afterAll(async () => {
  for (const node of nodes) expect(await node.stop()).toBe(0);
  await killStrayServes();
  await mock.close();
  await admin((client) => client.query(`drop database if exists ${databaseName} with (force)`));
});

async function createKey(name: string): Promise<{ key: string; id: string }> {
  return files.cli('keys', 'create', '--account', 'tenant', '--name', name);
}

/** Waits until `expected` connections listen on the access-change channel. */
async function waitForSubscribers(expected: number): Promise<void> {
  const redis = new Redis(testRedisUrl());
  try {
    await waitFor(`${expected} subscribers to the access-change channel`, async () => {
      const [, count] = (await redis.pubsub('NUMSUB', accessChangesChannel(keyPrefix))) as [string, number];
      return count >= expected;
    });
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

  it('honours a revocation on every node, through the Redis broadcast', async () => {
    const victim = await createKey('victim');
    // The account's minute is used up: lift its limit for this part (each node sees it on its next poll or
    // broadcast, so wait for it rather than assume it).
    await files.cli('accounts', 'set-limits', 'tenant', '--rpm', 'none');
    for (const node of nodes) {
      await waitFor('the victim key to be served', async () => {
        const response = await chat(node, victim.key);
        await response.arrayBuffer();
        return response.status === 200;
      });
    }
    // Both nodes subscribe in the background at start-up (the poll covers them until then): this test is about the
    // broadcast, so it waits until Redis counts both subscribers.
    await waitForSubscribers(nodes.length);
    const revocation = await runCli(['keys', 'revoke', victim.id, '--config', files.configFile]);
    // The CLI tells every node through Redis; a warning here means it could not (the 30 s poll would be too late).
    expect(revocation.stderr).toBe('');
    // The wait gives up after 15 s, before any node's 30 s poll: a refusal can only have come from the broadcast.
    await Promise.all(
      nodes.map((node, index) =>
        waitFor(`node ${index} to refuse the revoked key`, async () => {
          const response = await chat(node, victim.key);
          requestIds.push(response.headers.get('x-request-id') as string);
          await response.arrayBuffer();
          return response.status === 401;
        }),
      ),
    );
  });

  it('has every request of every node in the one request log', async () => {
    const identified = requestIds.filter((id) => id);
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    let found = 0;
    try {
      await waitFor('every request in the log', async () => {
        const result = await client.query('select count(*)::int as n from request_log where request_id = any($1)', [
          identified,
        ]);
        found = result.rows[0].n;
        return found >= identified.length;
      });
    } finally {
      await client.end();
    }
    // Refusals of the revoked key are logged too: the key exists, so they belong to its account.
    expect(found).toBeGreaterThanOrEqual(600);
    expect(found).toBe(identified.length);
  });
});
