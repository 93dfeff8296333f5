import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount, setAccountLimits } from '../src/accounts/service.js';
import { testRedisUrl } from './support/environment.js';
import { chatBody, postChat, startTestGateway, type TestGateway, waitForLogRows } from './support/gateway.js';
import {
  defaultBehaviour,
  type MockUpstream,
  type RecordedRequest,
  startMockUpstream,
} from './support/mock-openai-upstream.js';
import { waitFor } from './support/wait.js';

/**
 * docs/operations.md, "Limits and budgets", attacked the way a busy client attacks them: the same call fired many
 * times at once, on one node (in-process counters) and on two nodes sharing Redis, then the invariants checked. A
 * concurrency limit of N lets exactly N reach the upstream at once, and every slot comes back whatever became of the
 * request (client gone mid-stream, upstream error, timeout, fallback, refused after its reservation); a per-minute
 * limit admits exactly the limit; a budget nearly spent admits only what the requests in flight can overshoot it by,
 * and the spend counted is the sum of the log's costs.
 */

/** The upstream of model `gate`: counts the calls under way and holds them until the test opens it. */
interface Gate {
  running: number;
  mostAtOnce: number;
  arrived: number;
  close(): void;
  open(): void;
  handler(request: RecordedRequest, response: ServerResponse): Promise<void>;
}

function startGate(): Gate {
  let waiting: Array<() => void> = [];
  let opened = false;
  const gate: Gate = {
    running: 0,
    mostAtOnce: 0,
    arrived: 0,
    close() {
      opened = false;
      gate.arrived = 0;
      gate.mostAtOnce = gate.running;
    },
    open() {
      opened = true;
      for (const go of waiting.splice(0)) go();
    },
    async handler(request, response) {
      gate.arrived++;
      gate.running++;
      gate.mostAtOnce = Math.max(gate.mostAtOnce, gate.running);
      response.on('close', () => gate.running--);
      if (!opened) await new Promise<void>((resolve) => waiting.push(resolve));
      await defaultBehaviour({ ...request, body: { ...request.body, model: 'mock' } }, response);
    },
  };
  waiting = [];
  return gate;
}

const gate = startGate();
let mock: MockUpstream;
const topologies: Record<string, TestGateway[]> = {};
let admin: Redis;
const prefix = `bursts-${randomBytes(4).toString('hex')}:`;

/** About $0.14 a request of the mock's size: a budget is a request or two. */
const pricey = { input: 10_000, output: 10_000 };
const models = [
  { name: 'gate', provider: 'mock-patient', upstream_model: 'gate', pricing: pricey },
  { name: 'falls-back', provider: 'mock', upstream_model: 'error-500', fallbacks: ['mock'], pricing: pricey },
  { name: 'tiny-window', provider: 'mock', upstream_model: 'mock', context_window: 2, pricing: pricey },
];

beforeAll(async () => {
  mock = await startMockUpstream();
  mock.on('gate', (request, response) => gate.handler(request, response));
  admin = new Redis(testRedisUrl());
  topologies['one node'] = [await startTestGateway({ mock, models })];
  const config = { redis: { url: testRedisUrl(), key_prefix: prefix } };
  const first = await startTestGateway({ mock, models, config });
  const second = await startTestGateway({ mock, models, config, dataDir: first.dataDir, database: first.database });
  topologies['two nodes sharing Redis'] = [first, second];
});
afterAll(async () => {
  for (const nodes of Object.values(topologies)) for (const node of [...nodes].reverse()) await node.close();
  admin?.disconnect();
  await mock?.close();
});

const as = (key: string) => ({ authorization: `Bearer ${key}` });

/**
 * Fires `count` requests at once, spread over the nodes, while the gate is closed: those admitted wait at the upstream,
 * those refused are answered. Once every request is one or the other, the gate opens.
 */
async function burst(nodes: TestGateway[], key: string, count: number, body: (index: number) => unknown) {
  gate.close();
  const answered: number[] = [];
  const results = Array.from({ length: count }, (_, index) =>
    postChat(nodes[index % nodes.length] as TestGateway, body(index), as(key)).then(async (response) => {
      const text = await response.text();
      if (response.status !== 200) answered.push(response.status);
      return { status: response.status, id: response.headers.get('x-request-id') as string, text };
    }),
  );
  await waitFor('every request to be admitted or refused', () => gate.arrived + answered.length === count);
  const atOnce = gate.mostAtOnce;
  gate.open();
  const all = await Promise.all(results);
  return { atOnce, all, admitted: all.filter((result) => result.status === 200) };
}

const held = (index: number) => chatBody('gate', { stream: index % 2 === 1, max_tokens: 5 });

/** Everything that can become of an admitted request besides a plain answer; each must give its slot back. */
async function everyOtherEnding(node: TestGateway, key: string): Promise<void> {
  // The client leaves a stream half-way.
  const controller = new AbortController();
  const leaving = await fetch(`${node.baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { ...as(key), 'content-type': 'application/json' },
    body: JSON.stringify(chatBody('slow-stream', { stream: true })),
    signal: controller.signal,
  });
  const reader = (leaving.body as ReadableStream<Uint8Array>).getReader();
  await reader.read();
  controller.abort();
  await reader.cancel().catch(() => undefined);
  const endings: Array<[string, Record<string, unknown>, number]> = [
    ['error-500', {}, 502], // retried, then failed
    ['hang', {}, 504], // upstream timeout
    ['falls-back', {}, 200], // fallback to another model
    ['tiny-window', {}, 400], // refused after the reservation (context window)
    ['error-400', {}, 400], // the upstream refused it
    ['midstream-reset', { stream: true }, 200], // the upstream cut the stream
  ];
  for (const [model, extra, status] of endings) {
    const response = await postChat(node, chatBody(model, extra), as(key));
    await response.text();
    expect(response.status, model).toBe(status);
  }
}

describe.each(['one node', 'two nodes sharing Redis'])('%s', (topology) => {
  const nodes = () => topologies[topology] as TestGateway[];
  const firstNode = () => nodes()[0] as TestGateway;
  const lastNode = () => nodes()[nodes().length - 1] as TestGateway;

  it('lets exactly N requests of a concurrency limit of N reach the upstream, and gets every slot back', async () => {
    const { key } = await firstNode().newKey({ name: 'concurrency-3', limits: { concurrentRequests: 3 } });
    const first = await burst(nodes(), key, 15, held);
    expect(first.atOnce).toBe(3);
    expect(first.admitted).toHaveLength(3);
    for (const node of nodes()) await everyOtherEnding(node, key);
    await waitFor('the upstream to be idle', () => gate.running === 0);
    const again = await burst(nodes(), key, 15, held);
    expect(again.atOnce).toBe(3);
    expect(again.admitted).toHaveLength(3);
  });

  it('applies the tighter of the key and account concurrency limits', async () => {
    const account = `narrow-${randomBytes(3).toString('hex')}`;
    const node = firstNode();
    await createAccount(node.gateway.database.db, { name: account });
    await setAccountLimits(node.gateway.database.db, account, { concurrentRequests: 2 });
    const { key } = await node.newKey({ account, name: 'wide-key', limits: { concurrentRequests: 5 } });
    const result = await burst(nodes(), key, 12, held);
    expect(result.atOnce).toBe(2);
    expect(result.admitted).toHaveLength(2);
  });

  it('admits exactly the requests-per-minute limit out of a burst of three times as many', async () => {
    const { key } = await firstNode().newKey({ name: 'rpm-8', limits: { requestsPerMinute: 8 } });
    const result = await burst(nodes(), key, 24, held);
    expect(result.admitted).toHaveLength(8);
    expect(result.all.filter((answer) => answer.status === 429)).toHaveLength(16);
  });

  it('lets a burst overshoot a nearly spent budget only by the one request it admits, and counts what the log says', async () => {
    const { key, id } = await firstNode().newKey({ name: 'budget', limits: { dailyBudgetUsd: 0.2 } });
    // $0.14 of the $0.20 spent.
    gate.open();
    const nearly = await postChat(firstNode(), chatBody('gate'), as(key));
    await nearly.text();
    expect(nearly.status).toBe(200);
    const result = await burst(nodes(), key, 20, held);
    // Under the budget when the burst began, so one is admitted; its reservation takes the counter past the budget.
    expect(result.admitted).toHaveLength(1);
    const refusals = result.all.filter((answer) => answer.status !== 200);
    for (const refusal of refusals) expect(JSON.parse(refusal.text).error.code).toBe('insufficient_quota');
    const ids = [nearly.headers.get('x-request-id') as string, ...result.all.map((answer) => answer.id)];
    const rows = (await waitForLogRows(firstNode(), ids)) as Array<{ cost_usd: number | null }>;
    const logged = rows.reduce((total, row) => total + (row.cost_usd ?? 0), 0);
    // The two answered requests, $0.14 each: over the budget by the one the burst admitted, no more.
    expect(logged).toBeCloseTo(0.28, 6);
    if (topology === 'two nodes sharing Redis') {
      const [spendKey] = await admin.keys(`${prefix}*key:${id}:spend:day:*`);
      await waitFor('the spend counted in Redis to settle to the log', async () => {
        const spent = Number(await admin.get(spendKey as string));
        return Math.abs(spent - Math.round(logged * 1_000_000)) <= ids.length;
      });
    }
    const after = await postChat(lastNode(), chatBody('mock-patient'), as(key));
    expect(after.status).toBe(429);
    await after.text();
  });
});
