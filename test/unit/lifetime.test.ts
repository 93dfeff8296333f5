import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/observability/logger.js';
import { Lifetime } from '../../src/startup/lifetime.js';

describe('Lifetime', () => {
  it('closes services in the reverse of their start, once, each with the deadline, past a failing one', async () => {
    const closed: string[] = [];
    const lifetime = new Lifetime(createLogger('silent'));
    const database = lifetime.add('database', { name: 'db' }, (_database, deadline) => {
      closed.push(`database@${deadline}`);
    });
    lifetime.add('writer', undefined, async () => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      closed.push('writer');
    });
    lifetime.add('broken', undefined, () => {
      throw new Error('cannot close');
    });
    lifetime.add('server', undefined, () => closed.push('server'));
    expect(database).toEqual({ name: 'db' });
    await Promise.all([lifetime.close(42), lifetime.close(43)]);
    expect(closed).toEqual(['server', 'writer', 'database@42']);
    await lifetime.close(44);
    expect(closed).toHaveLength(3);
  });
});
