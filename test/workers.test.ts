import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Client } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCliJson } from './support/cli.js';
import { signIn, testPassword } from './support/console.js';
import type { TestGateway } from './support/gateway.js';
import { holdRequests } from './support/held-requests.js';
import { defaultBehaviour, type MockUpstream, startMockUpstream } from './support/mock-openai-upstream.js';
import { sendJson } from './support/mock-server.js';
import {
  childProcessIds,
  createAccountWithKeys,
  killStrayServes,
  openServedDatabase,
  prepareServe,
  type Served,
  startServe,
} from './support/serve-process.js';
import { waitFor } from './support/wait.js';

/**
 * `serve --workers 2`: one port, two processes, one set of limits, deployment health shared through the primary process
 * (each worker marks its upstream requests with a test-only header, so the mock knows who sent what), graceful stop of
 * all, crashed workers replaced.
 */

let mock: MockUpstream;
let server: Served;
let limitedKey: string;
let openKey: string;
let oneAtATimeKey: string;
let serverStartedAt: number;
let otherAccountKey: string;
/** The test-only header with which each worker marks its upstream requests (its process id). */
const workerHeader = 'x-test-worker';
/** The worker whose requests `forwarded-primary` fails (the others it serves). */
let failingWorker: string | undefined;
const serverError = { error: { message: 'boom', type: 'server_error', param: null, code: null } };

beforeAll(async () => {
  mock = await startMockUpstream();
  const files = await prepareServe({
    config: {
      request_log: { flush_interval: '100ms' },
      console: { invitation_limit_per_user: 2 },
      providers: [{ name: 'mock', type: 'openai', base_url: mock.baseUrl }],
      models: [
        { name: 'mock', provider: 'mock' },
        { name: 'slow', provider: 'mock', upstream_model: 'held' },
        {
          name: 'isolated',
          deployments: [
            { provider: 'mock', upstream_model: 'isolated-primary' },
            { provider: 'mock', upstream_model: 'isolated-standby', weight: 0 },
          ],
        },
        ...['flaky', 'control', 'forwarded', 'merged'].map((name) => ({
          name,
          deployments: [
            { provider: 'mock', upstream_model: `${name}-primary` },
            { provider: 'mock', upstream_model: `${name}-standby`, weight: 0 },
          ],
        })),
      ],
      // Only the window's evidence ejects (failures of two accounts), and it is exchanged with the primary often.
      routing: {
        retry: { initial_backoff: '10ms', max_backoff: '40ms' },
        circuit_breaker: { failure_threshold: 1000, sync_interval: '100ms' },
      },
    },
  });
  const [limited, open, oneAtATime] = await createAccountWithKeys(files, 'acme', ['limited', 'open', 'one-at-a-time']);
  [{ key: otherAccountKey }] = await createAccountWithKeys(files, 'globex', ['app']);
  for (const upstreamModel of ['flaky-primary', 'control-primary', 'merged-primary']) {
    mock.on(upstreamModel, (_request, response) => sendJson(response, 500, serverError));
  }
  mock.on('forwarded-primary', (request, response) =>
    request.headers[workerHeader] === failingWorker
      ? sendJson(response, 500, serverError)
      : defaultBehaviour(request, response),
  );
  for (const upstreamModel of ['isolated-primary', 'isolated-standby']) {
    mock.on(upstreamModel, (request, response) =>
      JSON.stringify(request.body.messages).includes('POISON')
        ? sendJson(response, 500, serverError)
        : defaultBehaviour(request, response),
    );
  }
  // The budget (never reached: the models have no prices) makes the gateway warn about those models at start-up.
  await files.cli('keys', 'set-limits', limited.id, '--rpm', '10', '--daily-budget', '100');
  limitedKey = limited.key;
  openKey = open.key;
  await files.cli('keys', 'set-limits', oneAtATime.id, '--concurrency', '1');
  oneAtATimeKey = oneAtATime.key;
  serverStartedAt = Date.now();
  server = await startServe({
    reuse: files,
    args: ['--workers', '2'],
    env: { SWITCHBOARD_TEST_WORKER_HEADER: workerHeader },
  });
});

afterAll(async () => {
  await killStrayServes();
  await mock.close();
});

function chat(key: string, model = 'mock', content = 'hi') {
  return fetch(`${server.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', connection: 'close' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content }] }),
  }).then(async (response) => ({
    status: response.status,
    id: response.headers.get('x-request-id') as string,
    body: await response.text(),
  }));
}

function workerPids(): number[] {
  return childProcessIds(server.pid);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw error;
  }
}

/**
 * Fails the primary deployment of `model` for two accounts on one connection, so one worker alone ejects it, then
 * waits until both workers route around it: the other worker heard of the ejection from the primary process.
 */
async function ejectOnOneWorkerAndWaitForBoth(model: string): Promise<void> {
  const primaryCalls = () => mock.requests.filter((request) => request.body.model === `${model}-primary`).length;
  const pinned = new Client(server.url);
  try {
    for (let index = 0; index < 6; index++) {
      for (const key of [openKey, otherAccountKey]) {
        const response = await pinned.request({
          method: 'POST',
          path: '/v1/chat/completions',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model, messages: [{ role: 'user', content: `pinned #${index}` }] }),
        });
        // The standby answers what the primary failed.
        expect(response.statusCode).toBe(200);
        await response.body.text();
      }
    }
  } finally {
    await pinned.close();
  }
  await waitFor(`a worker to eject ${model}'s primary`, async () => {
    const text = await (await fetch(`${server.url}/metrics`, { headers: { connection: 'close' } })).text();
    return text.includes(`switchboard_deployment_unavailable{deployment="mock/${model}-primary"} 1`);
  });
  // Now on connections of their own, so the workers take turns; from one account only, so the other worker could
  // never gather the evidence to eject the primary by itself (failures of two accounts).
  await waitFor(`both workers to route around ${model}'s primary`, async () => {
    const before = primaryCalls();
    const statuses: number[] = [];
    for (let index = 0; index < 4; index++) statuses.push((await chat(openKey, model)).status);
    expect(statuses).toEqual([200, 200, 200, 200]);
    return primaryCalls() === before;
  });
}

/** The upstream models called for the request whose prompt carries `marker`, and the worker that called them. */
function upstreamCallsOf(marker: string): { models: string[]; workers: Set<string> } {
  const requests = mock.requests.filter((request) => JSON.stringify(request.body.messages).includes(marker));
  return {
    models: requests.map((request) => request.body.model as string),
    workers: new Set(requests.map((request) => String(request.headers[workerHeader]))),
  };
}

/** A connection pinned to one worker (a connection stays with the worker that accepted it). */
interface WorkerConnection {
  worker: string;
  /** Sends a chat request on this connection; returns the upstream models it reached (asserting this worker sent it). */
  send(key: string, model: string): Promise<string[]>;
  close(): Promise<void>;
}

async function sendOn(client: Client, key: string, model: string, content: string): Promise<number> {
  const response = await client.request({
    method: 'POST',
    path: '/v1/chat/completions',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content }] }),
  });
  await response.body.text();
  return response.statusCode;
}

/** One connection to each of the two workers, told apart by the header they mark their upstream requests with. */
async function connectionPerWorker(): Promise<[WorkerConnection, WorkerConnection]> {
  const connections = new Map<string, WorkerConnection>();
  for (let attempt = 0; connections.size < 2 && attempt < 20; attempt++) {
    const client = new Client(server.url);
    const marker = `which worker ${randomUUID()}`;
    expect(await sendOn(client, openKey, 'mock', marker)).toBe(200);
    const [worker] = upstreamCallsOf(marker).workers;
    if (worker === undefined || worker === 'undefined' || connections.has(worker)) {
      await client.close();
      continue;
    }
    connections.set(worker, {
      worker,
      send: async (key, model) => {
        const content = `${model} ${randomUUID()}`;
        // The standby answers whatever the primary failed.
        expect(await sendOn(client, key, model, content)).toBe(200);
        const calls = upstreamCallsOf(content);
        expect([...calls.workers]).toEqual([worker]);
        return calls.models;
      },
      close: () => client.close(),
    });
  }
  expect(connections.size).toBe(2);
  return [...connections.values()] as [WorkerConnection, WorkerConnection];
}

/** How many worker processes have logged that they listen (the primary's own line says "with several"). */
const workersListening = () => server.output.filter((line) => line.includes('"msg":"switchboard is listening"')).length;

/** How many processes of the server have logged that a stop signal reached them. */
const receivedSignal = () => server.output.filter((line) => line.includes('"msg":"received signal"')).length;

describe('serve --workers 2', () => {
  it('serves from two worker processes on one port', async () => {
    expect(workerPids()).toHaveLength(2);
    const results = await Promise.all(Array.from({ length: 20 }, () => chat(openKey)));
    expect(results.every((result) => result.status === 200)).toBe(true);
  });

  it('answers /metrics for every worker, whichever one a scrape reaches', async () => {
    // Each scrape on a connection of its own, so the workers take turns answering them.
    const requestsCounted = async () => {
      const response = await fetch(`${server.url}/metrics`, { headers: { connection: 'close' } });
      expect(response.status).toBe(200);
      const text = await response.text();
      let total = 0;
      for (const line of text.split('\n')) {
        if (line.startsWith('switchboard_requests_total{')) total += Number(line.slice(line.lastIndexOf(' ') + 1));
      }
      return total;
    };
    const before = await requestsCounted();
    const results = await Promise.all(Array.from({ length: 10 }, () => chat(openKey)));
    expect(results.every((result) => result.status === 200)).toBe(true);
    const scrapes: number[] = [];
    for (let index = 0; index < 6; index++) scrapes.push(await requestsCounted());
    // One worker's own counters would read a part of the 10 on every other scrape: Prometheus sees resets.
    expect(scrapes).toEqual(Array.from({ length: 6 }, () => before + 10));
  });

  it('combines per-process limits and constants across workers instead of summing them', async () => {
    const response = await fetch(`${server.url}/metrics`, { headers: { connection: 'close' } });
    const text = await response.text();
    const value = (name: string) => {
      const line = text.split('\n').find((entry) => entry.startsWith(`${name} `) || entry.startsWith(`${name}{`));
      return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
    };
    // Each worker's own limit (inherited from the primary, so the same in both), not their sum.
    const limits = workerPids().map((pid) => {
      const line = readFileSync(`/proc/${pid}/limits`, 'utf8')
        .split('\n')
        .find((entry) => entry.startsWith('Max open files')) as string;
      return Number(line.split(/\s+/)[3]);
    });
    expect(value('switchboard_process_process_max_fds')).toBe(Math.min(...limits));
    // A time, not two times added up: the workers started after this server's primary did.
    const started = value('switchboard_process_process_start_time_seconds') as number;
    expect(started).toBeGreaterThanOrEqual(Math.floor(serverStartedAt / 1000) - 1);
    expect(started).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000));
    expect(value('switchboard_process_nodejs_version_info')).toBe(1);
  });

  it('counts sign-in failures once for all workers (the primary keeps them, without Redis)', async () => {
    await runCliJson(['users', 'create', 'guarded@example.com', '--config', server.configFile], {
      input: 'the right password\n',
    });
    // Each attempt on a connection of its own, so the workers take turns: each alone would have seen four failures.
    const signIn = (password: string) =>
      fetch(`${server.url}/api/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', connection: 'close' },
        body: JSON.stringify({ email: 'guarded@example.com', password }),
      }).then((response) => response.status);
    const statuses: number[] = [];
    for (let index = 0; index < 8; index++) statuses.push(await signIn('a wrong guess'));
    // Five failures answered at once (console.sign_in_max_failures), then the guesser must wait, whichever worker: a
    // 429 at the sixth attempt, or later when a busy machine let the first wait (1 s, doubling) run out in between.
    // Counted by each worker alone (four failures each at most), no attempt would ever be made to wait.
    expect(statuses.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
    expect(statuses.slice(5)).toContain(429);
  });

  it('shares ejections: a deployment one worker ejected, the other stops sending requests to as well', async () => {
    await ejectOnOneWorkerAndWaitForBoth('flaky');
  });

  it("keeps one account's failing requests from ejecting a deployment for the others, across workers", async () => {
    const calls = (upstreamModel: string, marker: string) =>
      mock.requests.filter(
        (request) => request.body.model === upstreamModel && JSON.stringify(request.body.messages).includes(marker),
      ).length;
    // globex's prompts always fail upstream, acme's never; both on connections of their own, so both workers see both.
    const poisoned = Array.from({ length: 30 }, (_, index) => chat(otherAccountKey, 'isolated', `POISON #${index}`));
    const ordinary: number[] = [];
    for (let index = 0; index < 10; index++)
      ordinary.push((await chat(openKey, 'isolated', `ordinary #${index}`)).status);
    expect(new Set((await Promise.all(poisoned)).map((result) => result.status))).toEqual(new Set([502]));
    // Each worker judges the merged window of a deployment in its first exchange with the primary after failures of
    // its own there. Both have had one once another deployment, ejected by one worker after the poisoned requests
    // ended, is routed around by both: its ejection went out in an exchange of that worker, and reached the other in
    // one of its own. Then nobody may have ejected the primary.
    await ejectOnOneWorkerAndWaitForBoth('control');
    for (let index = 10; index < 14; index++)
      ordinary.push((await chat(openKey, 'isolated', `ordinary #${index}`)).status);
    expect(ordinary).toEqual(Array(14).fill(200));
    expect(calls('isolated-primary', 'ordinary')).toBe(14);
    expect(calls('isolated-standby', 'ordinary')).toBe(0);
    const text = await (await fetch(`${server.url}/metrics`, { headers: { connection: 'close' } })).text();
    expect(text).not.toContain('switchboard_deployment_unavailable{deployment="mock/isolated-primary"} 1');
  });

  it("forwards an ejection: the primary process passes one worker's ejection on to the other, which saw no failure", async () => {
    const [first, second] = await connectionPerWorker();
    try {
      // The primary deployment fails the first worker's requests only, from two accounts: evidence enough to eject.
      failingWorker = first.worker;
      for (let index = 0; index < 5; index++) {
        for (const key of [openKey, otherAccountKey]) {
          expect((await first.send(key, 'forwarded')).at(-1)).toBe('forwarded-standby');
        }
      }
      await waitFor('the first worker to eject the primary', async () =>
        (await first.send(openKey, 'forwarded')).every((model) => model === 'forwarded-standby'),
      );
      // The second worker's requests, which the primary deployment serves, stop reaching it once the primary process
      // has told it of the ejection; it never saw a failure there of its own.
      await waitFor('the second worker to route around the primary', async () => {
        const models = await second.send(openKey, 'forwarded');
        if (models.includes('forwarded-primary')) {
          expect(models).toEqual(['forwarded-primary']);
          return false;
        }
        return true;
      });
      for (let index = 0; index < 3; index++)
        expect(await second.send(openKey, 'forwarded')).toEqual(['forwarded-standby']);
    } finally {
      await first.close();
      await second.close();
    }
  });

  it("ejects on the workers' merged window: each worker alone sees the failures of one account only", async () => {
    const [first, second] = await connectionPerWorker();
    try {
      // Five requests of one account through each worker: only the window of both together holds failures of two
      // accounts (and ten requests, the minimum).
      for (let index = 0; index < 5; index++) {
        expect(await first.send(openKey, 'merged')).toContain('merged-primary');
        expect(await second.send(otherAccountKey, 'merged')).toContain('merged-primary');
      }
      for (const [connection, key] of [
        [first, openKey],
        [second, otherAccountKey],
      ] as const) {
        await waitFor(`worker ${connection.worker} to route around the primary`, async () =>
          (await connection.send(key, 'merged')).every((model) => model === 'merged-standby'),
        );
      }
    } finally {
      await first.close();
      await second.close();
    }
  });

  it("counts a user's invitations once for all workers (the primary keeps them, without Redis)", async () => {
    await runCliJson(['users', 'create', 'inviter@example.com', '--account', 'acme', '--config', server.configFile], {
      input: `${testPassword}\n`,
    });
    const session = await signIn({ url: server.url } as TestGateway, 'inviter@example.com');
    const account = (
      (await session.request('GET', '/api/session')).body as { memberships: Array<{ accountId: string }> }
    ).memberships[0]?.accountId;
    const statuses: number[] = [];
    // Each on a connection of its own, so the workers take turns: each alone would have allowed two.
    for (let index = 0; index < 4; index++) {
      const response = await session.request(
        'POST',
        `/api/accounts/${account}/invitations`,
        { email: `invitee${index}@example.com`, role: 'member' },
        { connection: 'close' },
      );
      statuses.push(response.status);
    }
    expect(statuses).toEqual([201, 201, 429, 429]);
  });

  it('keeps one set of limits for all workers (the primary counts, without Redis)', async () => {
    const results = await Promise.all(Array.from({ length: 30 }, () => chat(limitedKey)));
    expect(results.filter((result) => result.status === 200)).toHaveLength(10);
    expect(results.filter((result) => result.status === 429)).toHaveLength(20);
  });

  it('never refuses a sequential client its one concurrent request, whichever worker serves it', async () => {
    // Each request on a connection of its own, so the workers take turns. A worker frees the slot at the primary
    // before its answer ends: freed after, the next request (on the other worker) could reach the primary first.
    const statuses: number[] = [];
    for (let index = 0; index < 200; index++) statuses.push((await chat(oneAtATimeKey)).status);
    expect(statuses.filter((status) => status !== 200)).toEqual([]);
  });

  it('replaces a worker that crashes', async () => {
    const [victim] = workerPids();
    process.kill(victim as number, 'SIGKILL');
    await waitFor('a replacement worker', () => {
      const pids = workerPids();
      return pids.length === 2 && !pids.includes(victim as number);
    });
    // The other worker answers meanwhile; the replacement has started once it too says it listens (3 such lines).
    await waitFor('the replacement to listen', () => workersListening() === 3);
    expect((await chat(openKey)).status).toBe(200);
  });

  it('warns about models without prices once for all workers, replacement included', () => {
    // Logged by the primary, which reads the budgets once; each worker (and the replacement above) stays quiet.
    const warnings = server.output.filter((line) => line.includes('these models have no pricing'));
    expect(warnings).toHaveLength(1);
    expect(JSON.parse(warnings[0] as string).models).toEqual([
      'mock',
      'slow',
      'isolated',
      'flaky',
      'control',
      'forwarded',
      'merged',
    ]);
  });

  it('stops every worker on SIGTERM, finishing requests and writing their log rows', async () => {
    // Requests the workers have accepted, held upstream until both workers have begun shutting down.
    const held = holdRequests(mock);
    const inFlight = Array.from({ length: 10 }, () => chat(openKey, 'slow'));
    await held.arrived(10);
    const workers = workerPids();
    expect(workers).toHaveLength(2);
    const stopped = server.stop('SIGTERM');
    await waitFor('both workers to receive the signal', () => receivedSignal() >= 2).catch((error) => {
      throw new Error(`${error.message}\n${server.output.join('\n')}`);
    });
    held.releaseAll();
    const code = await stopped;
    const results = await Promise.all(inFlight);
    expect(code).toBe(0);
    expect(results.map((result) => result.status)).toEqual(Array(10).fill(200));
    expect(workers.filter(isAlive)).toEqual([]);
    const handle = await openServedDatabase(server);
    try {
      const rows = await handle.db.selectFrom('request_log').select('request_id').execute();
      const ids = new Set(rows.map((row) => row.request_id));
      for (const result of results.filter((item) => item.status === 200)) expect(ids.has(result.id)).toBe(true);
    } finally {
      await handle.close();
    }
  });
});
