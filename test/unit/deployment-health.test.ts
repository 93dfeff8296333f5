import { describe, expect, it } from 'vitest';
import type { ModelConfig } from '../../src/config/schema.js';
import { apiError } from '../../src/errors/api-error.js';
import {
  type CircuitBreakerSettings,
  DeploymentHealth,
  type Ejection,
  type OutcomeContext,
  type Transition,
} from '../../src/routing/deployment-health.js';
import { OutcomeWindow } from '../../src/routing/outcome-window.js';
import { isOutlier, mayFollowTheRequest } from '../../src/routing/outlier-detection.js';
import type { Deployment, RouteChain } from '../../src/routing/router.js';
import { UpstreamFailure } from '../../src/upstream/failure.js';

/**
 * Deployment health on an injected clock: what counts against a deployment (the traffic as a whole, every account
 * weighing the same; retries of one request once), ejection and probing, the panic rule, and taking on what other
 * nodes decided.
 */

function clock() {
  let now = 1_000_000;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

const settings = (overrides: Partial<CircuitBreakerSettings> = {}): CircuitBreakerSettings => ({
  enabled: true,
  failureThreshold: 3,
  failurePercentage: 80,
  minimumRequests: 10,
  minimumAccounts: 2,
  windowMs: 60_000,
  cooldownMs: 1000,
  maxCooldownMs: 4000,
  panicThreshold: 50,
  syncIntervalMs: 1000,
  ...overrides,
});

const serverError = () => apiError('upstream_error', 'boom');
const refused = () => {
  const socketError = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
  return apiError('upstream_unreachable', 'could not be reached', {
    cause: new UpstreamFailure('unreachable', 'could not reach the upstream (ECONNREFUSED)', { cause: socketError }),
  });
};

/** `count` requests of `account`, each failing once (a new request object each time). */
function fail(health: DeploymentHealth, deployment: string, account: string, count: number, error = serverError()) {
  for (let index = 0; index < count; index++) health.failed(deployment, { account, request: {}, error });
}

function succeed(health: DeploymentHealth, deployment: string, account: string, count: number) {
  for (let index = 0; index < count; index++) health.succeeded(deployment, { account, request: {} });
}

function chainOf(...ids: string[]): RouteChain {
  const deployment = (id: string) => ({ id, weight: 1 }) as unknown as Deployment;
  return [{ model: {} as ModelConfig, deployments: ids.map(deployment) }];
}

describe('what counts against a deployment', () => {
  it("one account's failing requests never eject it while another account succeeds, however many", () => {
    const health = new DeploymentHealth(settings(), clock().now);
    for (let round = 0; round < 50; round++) {
      fail(health, 'd', 'flooder', 10);
      succeed(health, 'd', 'quiet', 1);
    }
    expect(health.entries()).toEqual([]);
    expect(health.isAvailable('d')).toBe(true);
  });

  it('one account alone is not enough evidence, unless the operator says one is (single tenant)', () => {
    const shared = new DeploymentHealth(settings(), clock().now);
    fail(shared, 'd', 'only', 30);
    expect(shared.isAvailable('d')).toBe(true);
    const single = new DeploymentHealth(settings({ minimumAccounts: 1 }), clock().now);
    fail(single, 'd', 'only', 10);
    expect(single.isAvailable('d')).toBe(false);
  });

  it('ejects when the accounts fail alike: the mean of their failure rates, over a minimum of requests', () => {
    const health = new DeploymentHealth(settings(), clock().now);
    fail(health, 'd', 'a', 4);
    fail(health, 'd', 'b', 4);
    // Eight requests, both accounts at 100%: below the minimum volume.
    expect(health.isAvailable('d')).toBe(true);
    succeed(health, 'd', 'a', 1);
    fail(health, 'd', 'b', 1);
    // Ten requests; a at 80%, b at 100%: 90% on average.
    expect(health.isAvailable('d')).toBe(false);
  });

  it('counts a request once however often it is retried on the deployment', () => {
    const health = new DeploymentHealth(settings({ minimumRequests: 3, minimumAccounts: 1 }), clock().now);
    const request = {};
    for (let attempt = 0; attempt < 5; attempt++) health.failed('d', { account: 'a', request, error: serverError() });
    expect(health.isAvailable('d')).toBe(true);
    fail(health, 'd', 'a', 2);
    expect(health.isAvailable('d')).toBe(false);
  });

  it('forgets outcomes that have left the window', () => {
    const time = clock();
    const health = new DeploymentHealth(settings(), time.now);
    fail(health, 'd', 'a', 5);
    fail(health, 'd', 'b', 4);
    time.advance(60_000);
    fail(health, 'd', 'b', 1);
    expect(health.isAvailable('d')).toBe(true);
  });

  it('ejects after consecutive failures that cannot be the requests own, from one account too', () => {
    const health = new DeploymentHealth(settings(), clock().now);
    fail(health, 'd', 'a', 2, refused());
    succeed(health, 'd', 'a', 1);
    fail(health, 'd', 'a', 2, refused());
    expect(health.isAvailable('d')).toBe(true);
    fail(health, 'd', 'a', 1, refused());
    expect(health.isAvailable('d')).toBe(false);
  });

  it('tells failures the request may cause from those it cannot', () => {
    expect(mayFollowTheRequest(serverError())).toBe(true);
    expect(mayFollowTheRequest(refused())).toBe(false);
    const auth = apiError('upstream_auth_failed', 'no');
    expect(mayFollowTheRequest(auth)).toBe(false);
    const reset = apiError('upstream_unreachable', 'reset', {
      cause: new UpstreamFailure('unreachable', 'reset', {
        cause: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }),
      }),
    });
    // A connection reset mid-request may be the upstream choking on this very request.
    expect(mayFollowTheRequest(reset)).toBe(true);
  });

  it('never ejects when the breaker is off, but still honours an upstream retry-after', () => {
    const time = clock();
    const health = new DeploymentHealth(settings({ enabled: false, minimumAccounts: 1, minimumRequests: 1 }), time.now);
    fail(health, 'd', 'a', 20, refused());
    expect(health.isAvailable('d')).toBe(true);
    health.failed('d', { account: 'a', request: {}, pauseMs: 5000 });
    expect(health.isPaused('d')).toBe(true);
    time.advance(5000);
    expect(health.isAvailable('d')).toBe(true);
  });

  it('judges the window on every account weighing the same', () => {
    const tally = (successes: number, failures: number) => ({ successes, failures });
    const rule = { failureThreshold: 5, failurePercentage: 80, minimumRequests: 10, minimumAccounts: 2 };
    expect(isOutlier([tally(0, 100), tally(10, 0)], rule)).toBe(false);
    expect(isOutlier([tally(0, 100), tally(0, 100), tally(10, 0)], rule)).toBe(false);
    expect(isOutlier([tally(0, 5), tally(1, 4)], rule)).toBe(true);
    expect(isOutlier([tally(0, 5), tally(0, 4)], rule)).toBe(false);
  });
});

describe('ejection and probing', () => {
  it('stays out for the cooldown, admits one probe, doubles the cooldown while probes fail, recovers on success', () => {
    const time = clock();
    const health = new DeploymentHealth(settings({ minimumRequests: 2 }), time.now);
    fail(health, 'd', 'a', 1);
    fail(health, 'd', 'b', 1);
    expect(health.availableInMs('d')).toBe(1000);
    expect(health.entries()).toEqual([{ deployment: 'd', state: 'open', availableInMs: 1000 }]);
    time.advance(1000);
    expect(health.tryAcquire('d')).toBe(true);
    // One probe at a time.
    expect(health.tryAcquire('d')).toBe(false);
    fail(health, 'd', 'a', 1);
    expect(health.availableInMs('d')).toBe(2000);
    time.advance(2000);
    expect(health.tryAcquire('d')).toBe(true);
    fail(health, 'd', 'a', 1);
    time.advance(4000);
    expect(health.tryAcquire('d')).toBe(true);
    fail(health, 'd', 'a', 1);
    expect(health.availableInMs('d')).toBe(4000); // capped at max_cooldown
    time.advance(4000);
    expect(health.tryAcquire('d')).toBe(true);
    succeed(health, 'd', 'a', 1);
    expect(health.entries()).toEqual([]);
    // The evidence that ejected it is spent: one more failure is not enough.
    fail(health, 'd', 'b', 1);
    expect(health.isAvailable('d')).toBe(true);
  });

  it('lets another probe through when one never reported back within a cooldown, or was given back', () => {
    const time = clock();
    const health = new DeploymentHealth(settings({ minimumAccounts: 1, minimumRequests: 1 }), time.now);
    fail(health, 'd', 'a', 1);
    time.advance(1000);
    expect(health.tryAcquire('d')).toBe(true);
    time.advance(999);
    expect(health.tryAcquire('d')).toBe(false);
    time.advance(1);
    expect(health.tryAcquire('d')).toBe(true);
    health.released('d');
    expect(health.tryAcquire('d')).toBe(true);
  });

  it('ignores failures of requests sent before the ejection while the cooldown runs', () => {
    const time = clock();
    const health = new DeploymentHealth(settings({ minimumAccounts: 1, minimumRequests: 1 }), time.now);
    fail(health, 'd', 'a', 1);
    time.advance(500);
    fail(health, 'd', 'a', 3);
    expect(health.availableInMs('d')).toBe(500);
  });

  it('is not ended by a success while its cooldown runs', () => {
    const time = clock();
    const health = new DeploymentHealth(settings({ minimumAccounts: 1, minimumRequests: 1 }), time.now);
    const transitions: Transition[] = [];
    health.onTransition((_deployment, transition) => transitions.push(transition));
    fail(health, 'd', 'a', 1);
    // A request sent before the ejection answers on the first and the last millisecond of the cooldown.
    succeed(health, 'd', 'a', 1);
    time.advance(999);
    succeed(health, 'd', 'a', 1);
    expect(health.availableInMs('d')).toBe(1);
    expect(health.entries()).toEqual([{ deployment: 'd', state: 'open', availableInMs: 1 }]);
    const ejection = { count: 1, until: time.now() + 1 };
    expect(transitions).toEqual([{ kind: 'ejected', ejection }]);
    // The cooldown ends on time, not later: the probe goes, and its success brings the deployment back.
    time.advance(1);
    expect(health.tryAcquire('d')).toBe(true);
    succeed(health, 'd', 'a', 1);
    expect(health.entries()).toEqual([]);
    expect(transitions.at(-1)).toEqual({ kind: 'recovered', ejection });
    // Successes sent while it was out were not counted: one failure after the recovery ejects again (100%).
    fail(health, 'd', 'a', 1);
    expect(health.isAvailable('d')).toBe(false);
  });

  it('is neither ended nor extended by the outcomes of requests served in panic while its cooldown runs', () => {
    const time = clock();
    const health = new DeploymentHealth(settings({ failureThreshold: 1 }), time.now);
    const solo = chainOf('solo');
    fail(health, 'solo', 'x', 1, refused());
    time.advance(500);
    expect(health.tryAcquire('solo', solo)).toBe(true);
    succeed(health, 'solo', 'a', 1);
    expect(health.tryAcquire('solo', solo)).toBe(true);
    fail(health, 'solo', 'a', 1, refused());
    time.advance(499);
    expect(health.availableInMs('solo')).toBe(1);
    succeed(health, 'solo', 'a', 1);
    expect(health.availableInMs('solo')).toBe(1);
    // Once the cooldown has ended a success (a panic request's, like a probe's) brings it back.
    time.advance(1);
    succeed(health, 'solo', 'a', 1);
    expect(health.entries()).toEqual([]);
  });

  it('pauses a deployment for an upstream retry-after without ejecting it', () => {
    const time = clock();
    const health = new DeploymentHealth(settings(), time.now);
    health.failed('d', { account: 'a', request: {}, error: serverError(), pauseMs: 5000 });
    expect(health.isAvailable('d')).toBe(false);
    expect(health.isPaused('d')).toBe(true);
    expect(health.entries()).toEqual([{ deployment: 'd', state: 'closed', availableInMs: 5000 }]);
    time.advance(5000);
    expect(health.isAvailable('d')).toBe(true);
  });
});

describe('panic: the last deployments of a chain are not ejected into a refusal', () => {
  const ejected = (health: DeploymentHealth, deployment: string) => fail(health, deployment, 'x', 1, refused());

  it('serves through an ejected deployment when too few of the chain are healthy', () => {
    const health = new DeploymentHealth(settings({ failureThreshold: 1 }), clock().now);
    ejected(health, 'solo');
    const solo = chainOf('solo');
    expect(health.isAvailable('solo')).toBe(false);
    expect(health.isAvailable('solo', solo)).toBe(true);
    // Every request may go, not just one probe.
    expect(health.tryAcquire('solo', solo)).toBe(true);
    expect(health.tryAcquire('solo', solo)).toBe(true);
  });

  it('honours an ejection while enough of the chain is healthy (50% by default)', () => {
    const health = new DeploymentHealth(settings({ failureThreshold: 1 }), clock().now);
    ejected(health, 'a');
    expect(health.isAvailable('a', chainOf('a', 'b'))).toBe(false);
    expect(health.tryAcquire('a', chainOf('a', 'b'))).toBe(false);
    ejected(health, 'b');
    expect(health.isAvailable('a', chainOf('a', 'b', 'c'))).toBe(true);
    expect(health.isAvailable('a', chainOf('a', 'b'))).toBe(true);
  });

  it('refuses instead with panic_threshold 0, and never overrides an upstream retry-after', () => {
    const off = new DeploymentHealth(settings({ failureThreshold: 1, panicThreshold: 0 }), clock().now);
    ejected(off, 'solo');
    expect(off.isAvailable('solo', chainOf('solo'))).toBe(false);
    const paused = new DeploymentHealth(settings(), clock().now);
    paused.failed('solo', { account: 'a', request: {}, pauseMs: 5000 });
    expect(paused.isAvailable('solo', chainOf('solo'))).toBe(false);
  });
});

describe('sharing with other nodes', () => {
  it('reports its transitions, and takes on ejections and recoveries decided elsewhere', () => {
    const time = clock();
    const health = new DeploymentHealth(settings({ minimumRequests: 2 }), time.now);
    const transitions: Array<[string, Transition]> = [];
    health.onTransition((deployment, transition) => transitions.push([deployment, transition]));
    fail(health, 'd', 'a', 1);
    fail(health, 'd', 'b', 1);
    const ejection = { count: 1, until: time.now() + 1000 };
    expect(transitions).toEqual([['d', { kind: 'ejected', ejection }]]);
    time.advance(1000);
    succeed(health, 'd', 'a', 1);
    // The recovery names the ejection it ended: the shared store clears that one only.
    expect(transitions.at(-1)).toEqual(['d', { kind: 'recovered', ejection }]);

    const remote = new Map<string, Ejection | undefined>([
      ['d', { count: 2, until: time.now() + 2000 }],
      ['e', undefined],
    ]);
    health.adoptShared(remote, new Map(), new Set());
    expect(health.availableInMs('d')).toBe(2000);
    health.adoptShared(new Map([['d', undefined]]), new Map(), new Set());
    expect(health.isAvailable('d')).toBe(true);
    // Nothing decided elsewhere is announced back.
    expect(transitions).toHaveLength(2);
  });

  it('judges on the merged window while shared: the other node may have seen the successes', () => {
    const health = new DeploymentHealth(settings({ minimumRequests: 2 }), clock().now);
    health.setShared(true);
    fail(health, 'd', 'a', 1);
    fail(health, 'd', 'b', 1);
    expect(health.isAvailable('d')).toBe(true);
    expect(health.takeToJudge()).toEqual(['d']);
    const merged = (tallies: Array<[number, number]>) =>
      new Map([['d', tallies.map(([successes, failures]) => ({ successes, failures }))]]);
    health.adoptShared(
      new Map(),
      merged([
        [0, 1],
        [0, 1],
        [30, 0],
      ]),
      new Set(),
    );
    expect(health.isAvailable('d')).toBe(true);
    health.adoptShared(
      new Map(),
      merged([
        [0, 1],
        [0, 1],
      ]),
      new Set(),
    );
    expect(health.isAvailable('d')).toBe(false);
  });

  it('judges its own window when Redis could not be read', () => {
    const health = new DeploymentHealth(settings({ minimumRequests: 2 }), clock().now);
    health.setShared(true);
    fail(health, 'd', 'a', 1);
    fail(health, 'd', 'b', 1);
    health.setShared(false);
    health.judgeOwnWindows(health.takeToJudge());
    expect(health.isAvailable('d')).toBe(false);
  });

  it('sends only what the other nodes have not seen', () => {
    const time = clock();
    const window = new OutcomeWindow(60_000);
    const context: OutcomeContext = { account: 'a' };
    window.add(time.now(), context.account as string, true);
    window.add(time.now(), 'b', false);
    const first = window.unsent(time.now());
    expect(first).toHaveLength(2);
    window.markSent(first);
    expect(window.unsent(time.now())).toEqual([]);
    window.add(time.now(), 'a', true);
    expect(window.unsent(time.now())).toEqual([
      { bucketStart: time.now() - (time.now() % 10_000), account: 'a', successes: 0, failures: 1 },
    ]);
    expect(window.tallies(time.now()).get('a')).toEqual({ successes: 0, failures: 2 });
  });
});
