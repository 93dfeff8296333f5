import { describe, expect, it } from 'vitest';
import { createAccount } from '../src/accounts/service.js';
import { jsonOf, postChat, upstreamSecret } from './support/gateway.js';
import { useGatewayWithMock } from './support/gateway-fixture.js';
import { holdRequests } from './support/held-requests.js';
import { waitFor } from './support/wait.js';

/**
 * A provider's connections are shared out by account (upstream/connection-shares.ts): one account's burst of calls
 * that hold their connections cannot queue another account's call behind it.
 */

const setup = useGatewayWithMock((mock) => ({
  providers: [
    { name: 'small-pool', type: 'openai', base_url: mock.baseUrl, api_key: upstreamSecret, max_connections: 4 },
    // The same origin and max_connections, another share per account: a pool and shares of its own.
    {
      name: 'twin-pool',
      type: 'openai',
      base_url: mock.baseUrl,
      api_key: upstreamSecret,
      max_connections: 4,
      max_connections_per_account: 1,
    },
  ],
  models: [
    { name: 'held-small', provider: 'small-pool', upstream_model: 'held' },
    { name: 'quick-small', provider: 'small-pool', upstream_model: 'mock' },
    { name: 'held-twin', provider: 'twin-pool', upstream_model: 'held-twin' },
    { name: 'quick-twin', provider: 'twin-pool', upstream_model: 'mock' },
  ],
}));

describe("a provider's connections", () => {
  it("leave room for another account while one account's calls hold all it may have", async () => {
    const held = holdRequests(setup.mock, 'held');
    const before = setup.mock.requests.length;
    const heldArrived = () =>
      setup.mock.requests
        .slice(before)
        .filter(
          (request) => JSON.stringify(request.body.messages) === JSON.stringify([{ role: 'user', content: 'hold' }]),
        ).length;
    // Five calls of one account that the upstream holds: three reach it (its share of four), two wait in the gateway.
    const flooding = Array.from({ length: 5 }, () =>
      postChat(setup.gateway, { model: 'held-small', messages: [{ role: 'user', content: 'hold' }] }),
    );
    await held.arrived(3);
    await createAccount(setup.gateway.gateway.database.db, { name: 'other' });
    const other = await setup.gateway.newKey({ account: 'other', name: 'other' });
    const answer = await postChat(
      setup.gateway,
      { model: 'quick-small', messages: [{ role: 'user', content: 'hi' }] },
      { authorization: `Bearer ${other.key}` },
    );
    expect(answer.status).toBe(200);
    expect((await jsonOf(answer)).object).toBe('chat.completion');
    // Answered while the flood still held its three connections, and before its other two reached the upstream.
    expect(heldArrived()).toBe(3);
    // What /metrics shows of it: three connections in use, the flood's two other calls waiting.
    const gauges = await waitFor('the flood in the connection gauges', async () => {
      const current = await connectionGauges('small-pool');
      return current.waiting === 2 && current;
    });
    expect(gauges).toEqual({ inUse: 3, waiting: 2 });
    held.releaseAll();
    const statuses = await Promise.all(flooding.map(async (response) => (await response).status));
    expect(statuses).toEqual([200, 200, 200, 200, 200]);
    expect(heldArrived()).toBe(5);
    expect(await connectionGauges('small-pool')).toEqual({ inUse: 0, waiting: 0 });
  });

  it('of two providers of one origin are each their own, with their own share per account', async () => {
    const heldSmall = holdRequests(setup.mock, 'held');
    const heldTwin = holdRequests(setup.mock, 'held-twin');
    await createAccount(setup.gateway.gateway.database.db, { name: 'twin-flood' });
    const flood = await setup.gateway.newKey({ account: 'twin-flood', name: 'flood' });
    await createAccount(setup.gateway.gateway.database.db, { name: 'twin-other' });
    const other = await setup.gateway.newKey({ account: 'twin-other', name: 'other' });
    const ask = (key: string, model: string) =>
      postChat(
        setup.gateway,
        { model, messages: [{ role: 'user', content: 'hold' }] },
        { authorization: `Bearer ${key}` },
      );
    // small-pool's share (three of four) is taken first: it must not become twin-pool's, nor its connections twin's.
    const onSmall = Array.from({ length: 3 }, () => ask(flood.key, 'held-small'));
    await heldSmall.arrived(3);
    const onTwin = Array.from({ length: 2 }, () => ask(flood.key, 'held-twin'));
    await heldTwin.arrived(1);
    // Another account's call on twin-pool is answered at once (its four connections are not small-pool's)...
    const answer = await ask(other.key, 'quick-twin');
    expect(answer.status).toBe(200);
    // ...while the flood's second call on twin-pool still waits for its share of one.
    const twinArrivals = setup.mock.requests.filter((request) => request.body.model === 'held-twin').length;
    expect(twinArrivals).toBe(1);
    heldSmall.releaseAll();
    heldTwin.releaseAll();
    const statuses = await Promise.all([...onSmall, ...onTwin].map(async (response) => (await response).status));
    expect(statuses).toEqual([200, 200, 200, 200, 200]);
  });
});

/** The provider's upstream connection gauges, as GET /metrics reports them. */
async function connectionGauges(provider: string): Promise<{ inUse: number; waiting: number }> {
  const text = await (await fetch(`${setup.gateway.url}/metrics`)).text();
  const gauge = (name: string) => {
    const line = text.split('\n').find((candidate) => candidate.startsWith(`${name}{provider="${provider}"} `));
    return Number(line?.split(' ')[1]);
  };
  return {
    inUse: gauge('switchboard_upstream_connections_in_use'),
    waiting: gauge('switchboard_upstream_connections_waiting'),
  };
}
