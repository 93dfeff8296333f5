import { describe, expect, it } from 'vitest';
import { HealthLedger } from '../../src/routing/health-ledger.js';
import { bucketLengthMs } from '../../src/routing/outcome-window.js';
import type { HealthExchangeAnswer } from '../../src/routing/shared-health-store.js';
import { exchange, sharedHealthContract } from '../support/shared-health-contract.js';

/** The primary's shared deployment health for `serve --workers` without Redis: what Redis keeps, in memory. */

const windowMs = 60_000;

describe('HealthLedger', () => {
  it('merges the outcomes of every worker per account, and hands every worker the ejections', () => {
    let now = 1_000_000;
    const ledger = new HealthLedger(windowMs, () => now);
    const bucketStart = now - (now % bucketLengthMs(windowMs));
    const delta = (account: string, failures: number) => ({ bucketStart, account, successes: 0, failures });
    ledger.exchange(exchange(now, { outcomes: [{ deployment: 'd', deltas: [delta('a', 3)] }] }));
    const answer = ledger.exchange(
      exchange(now, { outcomes: [{ deployment: 'd', deltas: [delta('a', 2), delta('b', 1)] }], judge: ['d'] }),
    );
    expect(answer.merged).toEqual({
      d: [
        { successes: 0, failures: 5 },
        { successes: 0, failures: 1 },
      ],
    });
    expect(answer.states).toEqual({});

    ledger.exchange(
      exchange(now, { transitions: [['d', { kind: 'ejected', ejection: { count: 1, until: now + 30_000 } }]] }),
    );
    expect(ledger.exchange(exchange(now)).states).toEqual({ d: { count: 1, until: now + 30_000 } });
    // Kept a window past its cooldown (a half-open deployment stays so until a probe reports), then forgotten.
    now += 30_000 + windowMs - 1;
    expect(ledger.exchange(exchange(now)).states).toEqual({ d: { count: 1, until: now - windowMs + 1 } });
    now += 1;
    expect(ledger.exchange(exchange(now)).states).toEqual({});
  });

  it('forgets the ejection and its evidence when a worker reports the deployment recovered', () => {
    const now = 2_000_000;
    const ledger = new HealthLedger(windowMs, () => now);
    const bucketStart = now - (now % bucketLengthMs(windowMs));
    ledger.exchange(
      exchange(now, {
        transitions: [['d', { kind: 'ejected', ejection: { count: 1, until: now + 30_000 } }]],
        outcomes: [{ deployment: 'd', deltas: [{ bucketStart, account: 'a', successes: 0, failures: 4 }] }],
      }),
    );
    const recovery = { kind: 'recovered', ejection: { count: 1, until: now + 30_000 } } as const;
    const answer = ledger.exchange(exchange(now, { transitions: [['d', recovery]], judge: ['d'] }));
    expect(answer).toEqual({ merged: { d: [] }, states: {} });
  });
});

describe('HealthLedger, whatever order the workers exchange in', () => {
  sharedHealthContract((now) => {
    const ledger = new HealthLedger(windowMs, now);
    // Read as a worker reads the answer (ipc-health-store.ts): a deployment the ledger does not name is healthy.
    return async (sent): Promise<HealthExchangeAnswer> => {
      const { merged, states } = ledger.exchange(sent);
      return { merged, states: sent.readStates ? { d: states.d ?? null } : {} };
    };
  });
});
