import { expect, it } from 'vitest';
import { createLogger } from '../../src/observability/logger.js';
import { type CircuitBreakerSettings, DeploymentHealth, type Ejection } from '../../src/routing/deployment-health.js';
import { bucketLengthMs } from '../../src/routing/outcome-window.js';
import { type HealthExchange, type HealthTransport, SharedHealthStore } from '../../src/routing/shared-health-store.js';
import { manualClock } from './manual-clock.js';

/**
 * What every shared deployment-health store (Redis between nodes, the primary's ledger between workers) must do
 * whatever order the processes' exchanges arrive in: a recovery clears only the ejection it recovered from (a newer
 * one, and its evidence, stay), and an ejection already recovered from that arrives again later is not taken back in.
 * Run against a store by `test/unit/health-ledger.test.ts` and `test/redis-health-store.test.ts`; each test opens
 * a store of its own, on a clock the test moves.
 */

/** A store of its own, through the transport a process would use (naming every deployment, `d`, in `states`). */
export type OpenHealthStore = (now: () => number) => HealthTransport;

export const windowMs = 60_000;
const cooldownMs = 1000;

const settings: CircuitBreakerSettings = {
  enabled: true,
  failureThreshold: 3,
  failurePercentage: 80,
  minimumRequests: 1,
  minimumAccounts: 1,
  windowMs,
  cooldownMs,
  maxCooldownMs: 4000,
  panicThreshold: 50,
  syncIntervalMs: 1000,
};

/** An exchange at `now` with nothing in it but `parts`. */
export const exchange = (now: number, parts: Partial<HealthExchange> = {}): HealthExchange => ({
  transitions: [],
  outcomes: [],
  judge: [],
  readStates: true,
  now,
  ...parts,
});

/** Four failures of deployment `d` from account `a`, in the bucket of `now`. */
function fourFailures(now: number) {
  const bucketStart = now - (now % bucketLengthMs(windowMs));
  return { deployment: 'd', deltas: [{ bucketStart, account: 'a', successes: 0, failures: 4 }] };
}

const ejected = (ejection: Ejection) => ({ kind: 'ejected' as const, ejection });
const recovered = (ejection: Ejection) => ({ kind: 'recovered' as const, ejection });

/** Two processes (nodes or workers) sharing one store, each exchanging only when the test says so. */
function twoProcesses(transport: HealthTransport, now: () => number) {
  const open = () => {
    const health = new DeploymentHealth(settings, now);
    const logger = createLogger('silent');
    const store = new SharedHealthStore({ health, transport, intervalMs: 1000, logger, storeName: 'the store', now });
    return { health, store };
  };
  return [open(), open()] as const;
}

export function sharedHealthContract(open: OpenHealthStore): void {
  it('a late recovery leaves the newer ejection another process decided meanwhile, and its evidence', async () => {
    const clock = manualClock();
    const store = open(clock.now);
    const now = clock.now();
    const failures = fourFailures(now);
    const first = { count: 1, until: now + 30_000 };
    const second = { count: 2, until: now + 60_000 };
    await store(exchange(now, { transitions: [['d', ejected(first)]] }));
    await store(exchange(now, { transitions: [['d', ejected(second)]], outcomes: [failures] }));
    const answer = await store(exchange(now, { transitions: [['d', recovered(first)]], judge: ['d'] }));
    expect(answer).toEqual({ merged: { d: [{ successes: 0, failures: 4 }] }, states: { d: second } });
  });

  it('a recovery clears the ejection it recovered from and its evidence; with none stored, the evidence still', async () => {
    const clock = manualClock();
    const store = open(clock.now);
    const now = clock.now();
    const failures = fourFailures(now);
    const first = { count: 1, until: now + 30_000 };
    await store(exchange(now, { transitions: [['d', ejected(first)]], outcomes: [failures] }));
    const cleared = await store(exchange(now, { transitions: [['d', recovered(first)]], judge: ['d'] }));
    expect(cleared).toEqual({ merged: { d: [] }, states: { d: null } });
    await store(exchange(now, { outcomes: [failures] }));
    const again = await store(exchange(now, { transitions: [['d', recovered(first)]], judge: ['d'] }));
    expect(again).toEqual({ merged: { d: [] }, states: { d: null } });
  });

  it('the ejection recovered from, sent again late, is not taken back in; a new one is', async () => {
    const clock = manualClock();
    const store = open(clock.now);
    const now = clock.now();
    const first = { count: 1, until: now + 30_000 };
    await store(exchange(now, { transitions: [['d', ejected(first)]] }));
    await store(exchange(now, { transitions: [['d', recovered(first)]] }));
    expect((await store(exchange(now, { transitions: [['d', ejected(first)]] }))).states).toEqual({ d: null });
    const next = { count: 1, until: now + 31_000 };
    expect((await store(exchange(now, { transitions: [['d', ejected(next)]] }))).states).toEqual({ d: next });
  });

  for (const order of ['the newer ejection first', 'the recovery first'] as const) {
    it(`two processes: one's probe fails as the other's succeeds; both end with the newer ejection (${order})`, async () => {
      const clock = manualClock();
      const transport = open(clock.now);
      const [failing, succeeding] = twoProcesses(transport, clock.now);
      await failing.store.exchange();
      await succeeding.store.exchange();
      failing.health.failed('d', { account: 'a', request: {} });
      // Judged on the merged window in the exchange, and ejected; the other process takes the ejection on.
      await failing.store.exchange();
      await succeeding.store.exchange();
      expect(succeeding.health.availableInMs('d')).toBe(cooldownMs);

      clock.advance(cooldownMs);
      expect(failing.health.tryAcquire('d')).toBe(true);
      expect(succeeding.health.tryAcquire('d')).toBe(true);
      failing.health.failed('d', { account: 'a', request: {} });
      succeeding.health.succeeded('d', { account: 'a' });
      const exchanges =
        order === 'the newer ejection first' ? [failing, succeeding, failing] : [succeeding, failing, succeeding];
      for (const process of exchanges) await process.store.exchange();

      const out = [{ deployment: 'd', state: 'open', availableInMs: 2 * cooldownMs }];
      expect(failing.health.entries()).toEqual(out);
      expect(succeeding.health.entries()).toEqual(out);
    });
  }

  it('two processes: an ejection sent again after its recovery (its answer was lost) does not eject again', async () => {
    const clock = manualClock();
    const transport = open(clock.now);
    let lost = false;
    // The store wrote the ejection, but the process never heard back: it sends the ejection again next time.
    const lossy: HealthTransport = async (sent) => {
      const answer = await transport(sent);
      if (lost || sent.transitions.length === 0) return answer;
      lost = true;
      throw new Error('the answer was lost');
    };
    const [ejecting] = twoProcesses(lossy, clock.now);
    const [, recovering] = twoProcesses(transport, clock.now);
    await ejecting.store.exchange();
    await recovering.store.exchange();
    ejecting.health.failed('d', { account: 'a', request: {} });
    await ejecting.store.exchange();
    expect(lost).toBe(true);
    await recovering.store.exchange();
    expect(recovering.health.availableInMs('d')).toBe(cooldownMs);

    clock.advance(cooldownMs);
    expect(recovering.health.tryAcquire('d')).toBe(true);
    recovering.health.succeeded('d', { account: 'a' });
    await recovering.store.exchange();
    await ejecting.store.exchange();
    await recovering.store.exchange();
    expect(ejecting.health.entries()).toEqual([]);
    expect(recovering.health.entries()).toEqual([]);
  });
}
