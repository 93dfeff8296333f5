import { describe, expect, it } from 'vitest';
import { ApiError, apiError } from '../../src/errors/api-error.js';
import { SlotPool } from '../../src/providers/local/slot-pool.js';

const never = new AbortController().signal;

function pool(slots: string[], queueSize: number, queueTimeoutMs = 10_000, queuePerAccount = queueSize) {
  return new SlotPool(slots, { queueSize, queuePerAccount, queueTimeoutMs, modelName: 'tiny' });
}

const closing = apiError('model_unavailable', 'closing');

/** What became of a request for a slot: "served", or the message it was refused with. */
function outcome(promise: Promise<unknown>): Promise<string> {
  return promise.then(
    () => 'served',
    (error: ApiError) => error.message,
  );
}

async function rejection(promise: Promise<unknown>): Promise<ApiError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error('expected a rejection');
}

describe('SlotPool', () => {
  it('hands out free slots at once and queues the rest in order', async () => {
    const slots = pool(['a', 'b'], 2);
    const first = await slots.acquire(never);
    const second = await slots.acquire(never);
    expect([first.slot, second.slot].sort()).toEqual(['a', 'b']);
    const order: string[] = [];
    const third = slots.acquire(never).then((lease) => {
      order.push('third');
      return lease;
    });
    const fourth = slots.acquire(never).then((lease) => {
      order.push('fourth');
      return lease;
    });
    expect(slots.waiting).toBe(2);
    second.release();
    second.release(); // idempotent: the slot is not handed out twice
    expect((await third).slot).toBe(second.slot);
    expect(slots.waiting).toBe(1);
    first.release();
    expect((await fourth).slot).toBe(first.slot);
    expect(order).toEqual(['third', 'fourth']);
    expect(slots.busy).toBe(2);
  });

  it('prefers a slot the same owner used last, and says whose state a slot holds', async () => {
    const slots = pool(['a', 'b', 'c'], 0);
    const leases = await Promise.all([slots.acquire(never, 'x'), slots.acquire(never, 'y'), slots.acquire(never, 'z')]);
    expect(leases.map((lease) => lease.previousOwner)).toEqual([undefined, undefined, undefined]);
    for (const lease of leases) lease.release();
    const again = await slots.acquire(never, 'y');
    expect(again.slot).toBe(leases[1]?.slot);
    expect(again.previousOwner).toBe('y');
    const stranger = await slots.acquire(never, 'w');
    expect(stranger.previousOwner).not.toBe('w');
  });

  it('answers 503 model_overloaded with retry-after when the queue is full', async () => {
    const slots = pool(['a'], 1);
    await slots.acquire(never);
    void slots.acquire(never);
    const error = await rejection(slots.acquire(never));
    expect(error.status).toBe(503);
    expect(error.code).toBe('model_overloaded');
    expect(Number(error.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(error.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(error.message).toContain('1 requests are already waiting');
  });

  it('refuses at once with queue_size 0', async () => {
    const slots = pool(['a'], 0);
    await slots.acquire(never);
    expect((await rejection(slots.acquire(never))).code).toBe('model_overloaded');
  });

  it('gives up on a request that waited longer than the queue timeout', async () => {
    const slots = pool(['a'], 5, 50);
    await slots.acquire(never);
    const error = await rejection(slots.acquire(never));
    expect(error.status).toBe(503);
    expect(error.message).toContain('within 0 s');
    expect(slots.waiting).toBe(0);
  });

  it('drops a waiting request whose client left, without taking a slot', async () => {
    const slots = pool(['a'], 5);
    const held = await slots.acquire(never);
    const controller = new AbortController();
    const waiting = slots.acquire(controller.signal);
    controller.abort();
    expect((await rejection(waiting)).status).toBe(499);
    expect(slots.waiting).toBe(0);
    held.release();
    expect(slots.busy).toBe(0);
  });

  it('fails waiting requests on close and refuses new ones', async () => {
    const slots = pool(['a'], 5);
    await slots.acquire(never);
    const waiting = slots.acquire(never);
    const reason = apiError('model_unavailable', 'closing');
    slots.close(reason);
    expect(await rejection(waiting)).toBe(reason);
    expect(await rejection(slots.acquire(never))).toBe(reason);
  });

  it("serves the accounts' lanes in turn: one request of another account goes before a flood's second", async () => {
    const slots = pool(['a'], 10);
    const running = await slots.acquire(never, 'flood');
    const order: string[] = [];
    const queued = (owner: string, label: string) =>
      slots.acquire(never, owner).then((lease) => {
        order.push(label);
        lease.release();
      });
    const done = [
      ...Array.from({ length: 5 }, (_, index) => queued('flood', `flood ${index}`)),
      queued('quiet', 'quiet'),
      queued('other', 'other'),
    ];
    running.release();
    await Promise.all(done);
    expect(order).toEqual(['flood 0', 'quiet', 'other', 'flood 1', 'flood 2', 'flood 3', 'flood 4']);
  });

  it("refuses only the account over its own lane's cap, and lets the others queue", async () => {
    const slots = pool(['a'], 10, 10_000, 2);
    await slots.acquire(never, 'flood');
    const waiting = [outcome(slots.acquire(never, 'flood')), outcome(slots.acquire(never, 'flood'))];
    const refused = await rejection(slots.acquire(never, 'flood'));
    expect(refused).toMatchObject({ status: 503, code: 'model_overloaded' });
    expect(refused.message).toContain('2 requests of this account are already waiting');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    const quiet = outcome(slots.acquire(never, 'quiet'));
    expect(slots.waiting).toBe(3);
    slots.close(closing);
    expect(await Promise.all([...waiting, quiet])).toEqual(['closing', 'closing', 'closing']);
  });

  it('makes room in a full queue by refusing the newest request of the account with the most waiting', async () => {
    const slots = pool(['a'], 2);
    await slots.acquire(never, 'flood');
    const flood = [outcome(slots.acquire(never, 'flood')), outcome(slots.acquire(never, 'flood'))];
    const quiet = outcome(slots.acquire(never, 'quiet'));
    expect(slots.waiting).toBe(2);
    expect(await flood[1]).toContain('this account had the most requests waiting');
    // Every lane as long as the newcomer's would be: the queue is full, and the newcomer is the one refused.
    expect((await rejection(slots.acquire(never, 'third'))).message).toContain('2 requests are already waiting');
    slots.close(closing);
    expect([await flood[0], await quiet]).toEqual(['closing', 'closing']);
  });

  it('estimates retry-after from how long slots are held', async () => {
    const slots = pool(['a'], 10);
    for (let round = 0; round < 20; round++) {
      const lease = await slots.acquire(never);
      await new Promise((resolve) => setTimeout(resolve, 1));
      lease.release();
    }
    expect(slots.retryAfterSeconds()).toBe(1);
  });
});
