import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MockUpstream, startMockUpstream } from '../support/mock-openai-upstream.js';
import { type PrivateServer, startPrivateRedis } from '../support/private-services.js';
import { killStrayServes, prepareServe, type ServeFiles, startServe } from '../support/serve-process.js';
import { waitFor } from '../support/wait.js';
import { type ChatResult, chat, holdModel, mockModels } from './support.js';

/**
 * docs/operations.md, "Many nodes" and "Limits and budgets", beyond requests per minute: two real `serve` processes
 * sharing one Redis and one PostgreSQL database admit tokens per minute together, count a daily budget per UTC day
 * (crossed with a test-only clock, SWITCHBOARD_TEST_CLOCK_FILE), and get back the concurrency slots of a node that is
 * SIGKILLed (its leases stop being renewed and expire after `redis.concurrency_lease_ttl`).
 */

const leaseTtlMs = 2000;
let mock: MockUpstream;
let redis: PrivateServer;
let clockDirectory: string;
let clockFile: string;

beforeAll(async () => {
  mock = await startMockUpstream();
  redis = await startPrivateRedis();
  clockDirectory = mkdtempSync(path.join(tmpdir(), 'switchboard-clock-'));
  clockFile = path.join(clockDirectory, 'offset');
  writeFileSync(clockFile, '0');
});
afterAll(async () => {
  await killStrayServes();
  await redis?.close();
  await mock.close();
  rmSync(clockDirectory, { recursive: true, force: true });
});

async function cluster(): Promise<ServeFiles> {
  return prepareServe({
    database: 'postgres',
    config: {
      redis: {
        url: redis.url,
        key_prefix: `nodes-${randomBytes(4).toString('hex')}:`,
        concurrency_lease_ttl: `${leaseTtlMs}ms`,
      },
      // Every node hashes keys with the same secret.
      keys: { secret: randomBytes(24).toString('hex') },
      request_log: { flush_interval: '50ms' },
      ...mockModels(mock),
    },
  });
}

async function keyWith(files: ServeFiles, name: string, ...limits: string[]): Promise<string> {
  const created = await files.cli<{ key: string; id: string }>('keys', 'create', '--account', 'acme', '--name', name);
  if (limits.length > 0) await files.cli('keys', 'set-limits', created.id, ...limits);
  return created.key;
}

const outcome = (result: ChatResult) => (result.status === 200 ? 200 : `${result.status} ${result.code}`);

describe('two nodes, one Redis', () => {
  it('admit the shared tokens per minute together', async () => {
    const files = await cluster();
    await files.cli('accounts', 'create', 'acme');
    const tokensPerMinute = 1000;
    const probe = await keyWith(files, 'probe', '--tpm', String(tokensPerMinute));
    const limited = await keyWith(files, 'limited', '--tpm', String(tokensPerMinute));
    const nodes = [await startServe({ reuse: files }), await startServe({ reuse: files })];

    // What one request reserves on admission (prompt estimate + max_tokens), read from the headers of a fresh key.
    const body = { model: 'held', messages: [{ role: 'user', content: 'hi' }], max_tokens: 150 };
    const held = holdModel(mock, 'held');
    held.release();
    const calibration = await fetch(`${nodes[0]?.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${probe}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    await calibration.text();
    const reserved = tokensPerMinute - Number(calibration.headers.get('x-ratelimit-remaining-tokens'));
    expect(reserved).toBeGreaterThan(150);
    const fits = Math.floor(tokensPerMinute / reserved);

    // Requests held at the upstream keep their reservation: the two nodes together admit exactly what fits.
    const gate = holdModel(mock, 'held');
    const sent = 12;
    // Admitted requests wait at the upstream; anything answered before the gate opens is a refusal.
    const refused: Array<{ status: number; body: string }> = [];
    const results = Array.from({ length: sent }, (_, index) =>
      fetch(`${nodes[index % 2]?.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${limited}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }).then(async (response) => {
        const result = { status: response.status, body: await response.text() };
        if (result.status !== 200) refused.push(result);
        return result;
      }),
    );
    await waitFor('every request to be admitted or refused', () => gate.arrived() + refused.length === sent);
    expect(gate.arrived()).toBe(fits);
    for (const refusal of refused) {
      expect(refusal.status).toBe(429);
      expect(JSON.parse(refusal.body).error.code).toBe('rate_limit_exceeded');
      expect(refusal.body).toContain('tokens per minute');
    }
    gate.release();
    expect((await Promise.all(results)).filter((result) => result.status === 200)).toHaveLength(fits);
    for (const node of nodes) expect(await node.stop()).toBe(0);
  });

  it('count a daily budget per UTC day: spent on one node is spent on the other, and the next day starts afresh', async () => {
    const files = await cluster();
    await files.cli('accounts', 'create', 'acme');
    const budget = await keyWith(files, 'budget', '--daily-budget', '0.05');
    // Five minutes before the next UTC midnight.
    const midnight = Math.ceil(Date.now() / 86_400_000) * 86_400_000;
    writeFileSync(clockFile, String(midnight - 5 * 60_000 - Date.now()));
    const env = { NODE_ENV: 'test', SWITCHBOARD_TEST_CLOCK_FILE: clockFile };
    const nodes = [await startServe({ reuse: files, env }), await startServe({ reuse: files, env })];
    const [first, second] = nodes as [(typeof nodes)[0], (typeof nodes)[0]];

    expect(outcome(await chat(first, budget))).toBe(200);
    expect(outcome(await chat(second, budget))).toBe('429 insufficient_quota');
    expect(outcome(await chat(first, budget))).toBe('429 insufficient_quota');

    // One minute past midnight on both nodes: a new day, a new budget, shared again.
    writeFileSync(clockFile, String(midnight + 60_000 - Date.now()));
    expect(outcome(await chat(second, budget))).toBe(200);
    expect(outcome(await chat(first, budget))).toBe('429 insufficient_quota');
    expect(outcome(await chat(second, budget))).toBe('429 insufficient_quota');
    for (const node of nodes) expect(await node.stop()).toBe(0);
  });

  it('get back the concurrency slots of a node that is SIGKILLed, and only then', async () => {
    const files = await cluster();
    await files.cli('accounts', 'create', 'acme');
    const key = await keyWith(files, 'concurrent', '--concurrency', '2');
    const [doomed, survivor] = [await startServe({ reuse: files }), await startServe({ reuse: files })];
    const gate = holdModel(mock, 'held');
    const onDoomed = [
      chat(doomed, key, { model: 'held' }).catch((error: Error) => error),
      chat(doomed, key, { model: 'held' }).catch((error: Error) => error),
    ];
    await waitFor('both slots to be taken on the doomed node', () => gate.arrived() === 2);
    expect(outcome(await chat(survivor, key))).toBe('429 rate_limit_exceeded');

    // The running requests keep their slots past the lease's lifetime: the node renews them.
    const takenAt = Date.now();
    await waitFor('two lease lifetimes to pass', () => Date.now() - takenAt > 2 * leaseTtlMs);
    expect(outcome(await chat(survivor, key))).toBe('429 rate_limit_exceeded');

    await doomed.kill();
    const afterKill = Date.now();
    await waitFor('the survivor to be admitted', async () => (await chat(survivor, key)).status === 200);
    // Not before the leases could expire by themselves: nothing released them.
    expect(Date.now() - afterKill).toBeGreaterThan(leaseTtlMs / 3);
    gate.release();
    await Promise.all(onDoomed);
    expect(await survivor.stop()).toBe(0);
  });
});
