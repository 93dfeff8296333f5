import { describe, expect, it } from 'vitest';
import { ApiError, apiError } from '../../src/errors/api-error.js';
import { SlotPool } from '../../src/providers/local/slot-pool.js';

const never = new AbortController().signal;

function pool(slots: string[], queueSize: number, queueTimeoutMs = 10_000) {
  return new SlotPool(slots, { queueSize, queueTimeoutMs, modelName: 'tiny' });
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
