import { describe, expect, it } from 'vitest';
import { ConnectionShares } from '../../src/upstream/connection-shares.js';

describe('ConnectionShares', () => {
  it("keeps connections for other accounts beyond one account's share", () => {
    const shares = new ConnectionShares(4, 3);
    expect([1, 2, 3].map(() => shares.tryTake('a'))).toEqual([true, true, true]);
    expect(shares.tryTake('a')).toBe(false);
    expect(shares.tryTake('b')).toBe(true);
    expect(shares.tryTake('b')).toBe(false);
    expect(shares.load).toEqual({ inUse: 4, waiting: 0 });
  });

  it('serves the waiting accounts in turn as connections free, each within its share', () => {
    const shares = new ConnectionShares(2, 2);
    const started: string[] = [];
    expect(shares.tryTake('a') && shares.tryTake('a')).toBe(true);
    for (const name of ['a1', 'a2', 'a3']) shares.wait('a', () => started.push(name));
    shares.wait('b', () => started.push('b1'));
    shares.wait('c', () => started.push('c1'));
    // The flood's first waiting call, then one of each other account, before the flood's next.
    shares.release('a');
    shares.release('a');
    expect(started).toEqual(['a1', 'b1']);
    shares.release('a');
    expect(started).toEqual(['a1', 'b1', 'c1']);
    shares.release('b');
    shares.release('c');
    expect(started).toEqual(['a1', 'b1', 'c1', 'a2', 'a3']);
    expect(shares.load).toEqual({ inUse: 2, waiting: 0 });
  });

  it("starts another account's call while the first waits at its share", () => {
    const shares = new ConnectionShares(3, 1);
    const started: string[] = [];
    expect(shares.tryTake('a')).toBe(true);
    shares.wait('a', () => started.push('a2'));
    // A connection is free, but not to a: b takes it at once.
    expect(shares.tryTake('b')).toBe(true);
    shares.release('b');
    expect(started).toEqual([]);
    shares.release('a');
    expect(started).toEqual(['a2']);
  });

  it('forgets a waiting call whose client left', () => {
    const shares = new ConnectionShares(1, 1);
    const started: string[] = [];
    shares.tryTake('a');
    const leave = shares.wait('b', () => started.push('b'));
    shares.wait('c', () => started.push('c'));
    leave();
    shares.release('a');
    expect(started).toEqual(['c']);
    expect(shares.load).toEqual({ inUse: 1, waiting: 0 });
  });
});
