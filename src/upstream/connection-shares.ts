import { FairQueue } from '../limits/fair-queue.js';

/**
 * Hands out a provider's connections among accounts. An HTTP/1.1 connection carries one call at a time and a stream
 * holds it to its end, so a pool handed out first come, first served lets one account's burst of long streams take
 * every connection and queue everyone else's calls behind it (docs/operations.md, "Upstream connections shared out by
 * account"). Here an account holds at most `perAccount` of the `capacity` connections at once, and calls waiting for
 * a connection wait in a lane per account, the lanes served in turn (limits/fair-queue.ts). Calls without an account
 * (none today) share one lane.
 */

interface Waiter {
  account: string;
  start(): void;
}

export class ConnectionShares {
  private inUse = 0;
  private readonly held = new Map<string, number>();
  private readonly waiting = new FairQueue<Waiter>();
  private readonly underShare = (account: string) => (this.held.get(account) ?? 0) < this.perAccount;

  constructor(
    readonly capacity: number,
    readonly perAccount: number,
  ) {}

  /** Connections in use, and calls waiting for one. */
  get load(): { inUse: number; waiting: number } {
    return { inUse: this.inUse, waiting: this.waiting.size };
  }

  /**
   * Takes a connection for `account` when one is free to it. With a connection free, whoever waits is at their share
   * (each release starts every call it can), so no one is overtaken.
   */
  tryTake(account: string): boolean {
    if (this.inUse >= this.capacity || !this.underShare(account)) return false;
    this.take(account);
    return true;
  }

  /** Queues a call that found no connection: `start` runs once one is hers. Returns what takes it out of the queue. */
  wait(account: string, start: () => void): () => void {
    const waiter: Waiter = { account, start };
    this.waiting.push(account, waiter);
    return () => {
      this.waiting.remove(account, waiter);
    };
  }

  /** The call's connection is free again (its exchange or stream ended, however). */
  release(account: string): void {
    this.inUse--;
    const held = (this.held.get(account) ?? 1) - 1;
    if (held === 0) this.held.delete(account);
    else this.held.set(account, held);
    this.startWaiting();
  }

  private startWaiting(): void {
    while (this.inUse < this.capacity && this.waiting.size > 0) {
      const next = this.waiting.shiftEligible(this.underShare);
      if (!next) return;
      this.take(next.account);
      next.start();
    }
  }

  private take(account: string): void {
    this.inUse++;
    this.held.set(account, (this.held.get(account) ?? 0) + 1);
  }
}
