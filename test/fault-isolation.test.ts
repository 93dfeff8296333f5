import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAccount } from '../src/accounts/service.js';
import { testRedisUrl } from './support/environment.js';
import { jsonOf, startTestGateway, type TestGateway } from './support/gateway.js';
import { type ManualClock, manualClock } from './support/manual-clock.js';
import { defaultBehaviour, type MockUpstream, startMockUpstream } from './support/mock-openai-upstream.js';
import { sendJson } from './support/mock-server.js';
import { waitFor } from './support/wait.js';

/**
 * One tenant must never hurt another through the circuit breaker. Account A sends a steady stream of requests the
 * upstream always fails (their prompt carries a marker the mock answers 500 to) while account B's requests succeed,
 * on one node and on two nodes sharing Redis: B is served by the primary deployment every time, nothing is ejected,
 * and A gets the upstream's own error. When the upstream really is down for everyone, it is ejected (the standby
 * serves), probed, and brought back; across two nodes that each see only one of the failing accounts, that takes
 * the outcomes both nodes shared through Redis. Refused connections eject from one account's traffic alone (no
 * request can cause them). With Redis unreachable, each node judges on its own. Deployment health runs on a clock the
 * tests move (the nodes of a test share one), so a cooldown is checked on its last and first millisecond.
 */

const poison = 'POISON: the upstream always fails on this';
const serverError = { error: { message: 'boom', type: 'server_error', param: null, code: null } };

let mock: MockUpstream;
/** Upstream models (one per test) that fail every request, whoever sends it. */
const down = new Set<string>();

const promptOf = (body: Record<string, unknown>) => JSON.stringify(body.messages ?? []);
const callsTo = (upstreamModel: string, match: string) =>
  mock.requests.filter((request) => request.body.model === upstreamModel && promptOf(request.body).includes(match))
    .length;

/** Each test has its own deployments (so their health starts clean): `<name>-primary` and `<name>-standby`. */
function modelsFor(name: string) {
  return [
    {
      name,
      deployments: [
        { provider: 'mock', upstream_model: `${name}-primary` },
        { provider: 'mock', upstream_model: `${name}-standby`, weight: 0 },
      ],
    },
    // The setup: a model with one deployment (the same primary).
    { name: `${name}-solo`, provider: 'mock', upstream_model: `${name}-primary` },
  ];
}

const scenarios = ['one-node', 'one-node-down', 'two-nodes', 'two-nodes-down', 'redis-unreachable'] as const;

const cooldownMs = 30_000;

/** The breaker as shipped (its cooldown on the tests' clock), with a fast exchange with Redis so the tests do not idle. */
function routing() {
  return {
    retry: { initial_backoff: '10ms', max_backoff: '40ms' },
    circuit_breaker: { cooldown: '30s', max_cooldown: '5m', sync_interval: '100ms' },
  };
}

beforeAll(async () => {
  mock = await startMockUpstream();
  for (const scenario of scenarios) {
    for (const role of ['primary', 'standby']) {
      const upstreamModel = `${scenario}-${role}`;
      mock.on(upstreamModel, (request, response) => {
        if (promptOf(request.body).includes('POISON') || (role === 'primary' && down.has(upstreamModel))) {
          return sendJson(response, 500, serverError);
        }
        return defaultBehaviour(request, response);
      });
    }
  }
});

afterAll(async () => {
  await mock.close();
});

interface Tenant {
  name: string;
  key: string;
}

async function tenants(gateway: TestGateway): Promise<[Tenant, Tenant]> {
  const suffix = randomBytes(3).toString('hex');
  const result: Tenant[] = [];
  for (const name of [`tenant-a-${suffix}`, `tenant-b-${suffix}`]) {
    await createAccount(gateway.gateway.database.db, { name });
    result.push({ name, key: (await gateway.newKey({ account: name, name: 'app' })).key });
  }
  return result as [Tenant, Tenant];
}

async function chat(gateway: TestGateway, tenant: Tenant, model: string, content: string) {
  const response = await fetch(`${gateway.baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${tenant.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content }] }),
  });
  const body = await jsonOf(response);
  return { status: response.status, code: (body.error?.code ?? null) as string | null };
}

async function ejected(gateway: TestGateway, deployment: string): Promise<boolean> {
  const metrics = await (await fetch(`${gateway.url}/metrics`)).text();
  return metrics.includes(`switchboard_deployment_unavailable{deployment="${deployment}"} 1`);
}

/**
 * A floods with poisoned requests (three at a time) while B sends ordinary ones, on the nodes given (A and B each
 * use every node in turn): 60 and 12, so even the failure rate of all requests together (83%) is above the
 * threshold (80%). Returns every answer each got.
 */
async function floodAndServe(nodes: TestGateway[], a: Tenant, b: Tenant, model: string) {
  const answersA: Array<{ status: number; code: string | null }> = [];
  const answersB: Array<{ status: number; code: string | null }> = [];
  let sentA = 0;
  const flooder = async () => {
    while (sentA < 60) {
      const index = sentA++;
      const node = nodes[index % nodes.length] as TestGateway;
      const target = index % 3 === 0 ? `${model}-solo` : model;
      answersA.push(await chat(node, a, target, `${poison} #${index}`));
    }
  };
  const steady = async () => {
    for (let index = 0; index < 12; index++) {
      const node = nodes[index % nodes.length] as TestGateway;
      const target = index % 2 === 0 ? `${model}-solo` : model;
      answersB.push(await chat(node, b, target, `from B #${index}`));
    }
  };
  await Promise.all([flooder(), flooder(), flooder(), steady()]);
  return { answersA, answersB };
}

/**
 * Sends requests from each (node, tenant) in turn while the primary fails them all, until every node has ejected
 * it (a generous deadline only fails a stuck test).
 */
async function untilEjected(nodes: Array<[TestGateway, Tenant]>, model: string, deployment: string) {
  const answers: Array<{ status: number; code: string | null }> = [];
  let round = 0;
  await waitFor(`every node to eject ${deployment}`, async () => {
    round++;
    for (const [node, tenant] of nodes) answers.push(await chat(node, tenant, model, `ordinary #${round}`));
    const states = await Promise.all(nodes.map(([node]) => ejected(node, deployment)));
    return states.every(Boolean);
  });
  return { answers };
}

/**
 * The primary comes back while its cooldown runs. On the cooldown's last millisecond every node still routes the model
 * around it, though requests of its solo model (served in panic) failed and then succeeded meanwhile: neither extends
 * nor ends the cooldown. On the first millisecond after it, each node's next request goes to the primary (its probe,
 * or the recovery another node shared) and no node has it ejected any more.
 */
async function backAfterCooldown(nodes: Array<[TestGateway, Tenant]>, scenario: string, clock: ManualClock) {
  const upstreamModel = `${scenario}-primary`;
  clock.advance(cooldownMs - 1);
  for (const [node, tenant] of nodes) {
    expect(await chat(node, tenant, `${scenario}-solo`, 'in panic')).toEqual({ status: 502, code: 'upstream_error' });
  }
  down.delete(upstreamModel);
  for (const [node, tenant] of nodes) {
    expect(await chat(node, tenant, `${scenario}-solo`, 'in panic')).toEqual({ status: 200, code: null });
  }
  for (const [node, tenant] of nodes) {
    expect(await chat(node, tenant, scenario, 'last millisecond')).toEqual({ status: 200, code: null });
  }
  expect(callsTo(upstreamModel, 'last millisecond')).toBe(0);
  clock.advance(1);
  for (const [node, tenant] of nodes) {
    const marker = `recovery ${randomBytes(4).toString('hex')}`;
    expect(await chat(node, tenant, scenario, marker)).toEqual({ status: 200, code: null });
    expect(callsTo(upstreamModel, marker)).toBe(1);
  }
  const states = await Promise.all(nodes.map(([node]) => ejected(node, `mock/${upstreamModel}`)));
  expect(states).toEqual(nodes.map(() => false));
}

describe('one node', () => {
  const clock = manualClock();
  let gateway: TestGateway;
  let a: Tenant;
  let b: Tenant;

  beforeAll(async () => {
    gateway = await startTestGateway({
      mock,
      testHooks: { healthClock: clock.now },
      config: { routing: routing() },
      // Nothing listens on port 1: every connection is refused before any request reaches an upstream.
      providers: [{ name: 'closed', type: 'openai', base_url: 'http://127.0.0.1:1/v1', api_key: 'sk-closed' }],
      models: [
        ...modelsFor('one-node'),
        ...modelsFor('one-node-down'),
        {
          name: 'refused',
          deployments: [
            { provider: 'closed', upstream_model: 'anything' },
            { provider: 'mock', upstream_model: 'one-node-down-standby', weight: 0 },
          ],
        },
      ],
    });
    [a, b] = await tenants(gateway);
  });

  afterAll(async () => {
    await gateway?.close();
  });

  it("one account's failing requests do not take the deployment away from another account", async () => {
    const { answersA, answersB } = await floodAndServe([gateway], a, b, 'one-node');
    // B: every request answered, by the primary (the standby never saw one of B's requests).
    expect(answersB.filter((answer) => answer.status !== 200)).toEqual([]);
    expect(callsTo('one-node-standby', 'from B')).toBe(0);
    expect(callsTo('one-node-primary', 'from B')).toBe(12);
    // A: the upstream's own error, every time; never a refusal by the gateway.
    expect(new Set(answersA.map((answer) => `${answer.status} ${answer.code}`))).toEqual(
      new Set(['502 upstream_error']),
    );
    // Each of A's requests was retried, so the upstream saw many more failures than A sent requests.
    expect(callsTo('one-node-primary', 'POISON')).toBeGreaterThan(60);
    expect(await ejected(gateway, 'mock/one-node-primary')).toBe(false);
  });

  it('ejects an upstream that is down for every account, probes it and brings it back', async () => {
    down.add('one-node-down-primary');
    const deployment = 'mock/one-node-down-primary';
    const { answers } = await untilEjected(
      [
        [gateway, a],
        [gateway, b],
      ],
      'one-node-down',
      deployment,
    );
    // The standby served everything meanwhile.
    expect(answers.filter((answer) => answer.status !== 200)).toEqual([]);
    // Ejected: the next requests go to the standby without trying the primary first.
    const before = callsTo('one-node-down-primary', 'ordinary');
    for (let index = 0; index < 3; index++)
      expect((await chat(gateway, b, 'one-node-down', 'ordinary')).status).toBe(200);
    expect(callsTo('one-node-down-primary', 'ordinary')).toBe(before);
    // The model whose only deployment it is keeps serving: the upstream's own error, not no_healthy_deployment.
    expect(await chat(gateway, a, 'one-node-down-solo', 'ordinary')).toEqual({ status: 502, code: 'upstream_error' });
    await backAfterCooldown(
      [
        [gateway, a],
        [gateway, b],
      ],
      'one-node-down',
      clock,
    );
  });

  it('ejects after consecutive refused connections, even from one account: no request can cause those', async () => {
    const { answers } = await untilEjected([[gateway, a]], 'refused', 'closed/anything');
    expect(answers.length).toBeLessThanOrEqual(5);
    expect(answers.filter((answer) => answer.status !== 200)).toEqual([]);
  });
});

describe('two nodes sharing Redis', () => {
  const clock = manualClock();
  let first: TestGateway;
  let second: TestGateway;
  let a: Tenant;
  let b: Tenant;

  beforeAll(async () => {
    const config = {
      routing: routing(),
      redis: { url: testRedisUrl(), key_prefix: `test-${randomBytes(4).toString('hex')}:` },
    };
    const models = [...modelsFor('two-nodes'), ...modelsFor('two-nodes-down')];
    const testHooks = { healthClock: clock.now };
    first = await startTestGateway({ mock, config, models, testHooks });
    second = await startTestGateway({
      mock,
      config,
      models,
      testHooks,
      dataDir: first.dataDir,
      database: first.database,
    });
    [a, b] = await tenants(first);
  });

  afterAll(async () => {
    await second?.close();
    await first?.close();
  });

  it("one account's failing requests do not take the deployment away from another account", async () => {
    const { answersA, answersB } = await floodAndServe([first, second], a, b, 'two-nodes');
    expect(answersB.filter((answer) => answer.status !== 200)).toEqual([]);
    expect(callsTo('two-nodes-standby', 'from B')).toBe(0);
    expect(callsTo('two-nodes-primary', 'from B')).toBe(12);
    expect(new Set(answersA.map((answer) => `${answer.status} ${answer.code}`))).toEqual(
      new Set(['502 upstream_error']),
    );
    // Both nodes judge the primary in their first exchange with Redis after failures of their own; one each now, then
    // again after the other's, so each has judged with everything both saw. Then neither may have ejected it.
    for (const node of [first, second, first, second]) {
      expect(node.gateway.healthStore).toBeDefined();
      await node.gateway.healthStore?.exchange();
    }
    expect(await ejected(first, 'mock/two-nodes-primary')).toBe(false);
    expect(await ejected(second, 'mock/two-nodes-primary')).toBe(false);
  });

  it('ejects on the outcomes of both nodes when each sees one failing account, on both, and brings it back', async () => {
    down.add('two-nodes-down-primary');
    // A only ever reaches the first node, B only the second: neither node alone has failures from two accounts.
    const nodes: Array<[TestGateway, Tenant]> = [
      [first, a],
      [second, b],
    ];
    const { answers } = await untilEjected(nodes, 'two-nodes-down', 'mock/two-nodes-down-primary');
    expect(answers.filter((answer) => answer.status !== 200)).toEqual([]);
    await backAfterCooldown(nodes, 'two-nodes-down', clock);
  });
});

describe('Redis unreachable', () => {
  const clock = manualClock();
  let gateway: TestGateway;
  let a: Tenant;
  let b: Tenant;

  beforeAll(async () => {
    gateway = await startTestGateway({
      mock,
      testHooks: { healthClock: clock.now },
      // Nothing listens on port 1: every exchange fails at once, and the node judges its own outcomes.
      config: { routing: routing(), redis: { url: 'redis://127.0.0.1:1', key_prefix: 'unreachable:' } },
      models: modelsFor('redis-unreachable'),
    });
    [a, b] = await tenants(gateway);
  });

  afterAll(async () => {
    await gateway?.close();
  });

  it('keeps isolating tenants and ejecting a dead upstream on its own, without hanging', async () => {
    const { answersB } = await floodAndServe([gateway], a, b, 'redis-unreachable');
    expect(answersB.filter((answer) => answer.status !== 200)).toEqual([]);
    expect(callsTo('redis-unreachable-standby', 'from B')).toBe(0);
    down.add('redis-unreachable-primary');
    const nodes: Array<[TestGateway, Tenant]> = [
      [gateway, a],
      [gateway, b],
    ];
    await untilEjected(nodes, 'redis-unreachable', 'mock/redis-unreachable-primary');
    expect(gateway.logLines.some((line) => line.includes('deployment health: Redis does not answer'))).toBe(true);
  });
});
