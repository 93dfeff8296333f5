import { EventEmitter } from 'node:events';
import type { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import {
  AccessChangeFeed,
  accessChangesChannel,
  sqliteLatestChangeId,
  subscribedPollIntervalMs,
} from '../src/access/change-feed.js';
import { type DatabaseHandle, openDatabase } from '../src/db/connect.js';
import { recordAccessChange } from '../src/db/repositories/access-changes.js';
import { createLogger } from '../src/observability/logger.js';
import { type OpenTestDatabase, openTestDatabase } from './support/database.js';
import { waitFor } from './support/wait.js';

let opened: OpenTestDatabase;
let database: DatabaseHandle;

beforeEach(async () => {
  opened = await openTestDatabase('feed');
  database = opened.handle;
});

afterEach(() => opened.close());

/** A Redis subscriber connection whose first SUBSCRIBE fails, as one can while the connection is being set up. */
class FlakySubscriber extends EventEmitter {
  status = 'connecting';
  attempts = 0;
  subscribe(_channel: string): Promise<number> {
    this.attempts++;
    return this.attempts === 1 ? Promise.reject(new Error('Connection is closed.')) : Promise.resolve(1);
  }
}

describe('access-change feed', () => {
  it('subscribes again when the first SUBSCRIBE fails, and then hears changes', async () => {
    const subscriber = new FlakySubscriber();
    let changes = 0;
    const feed = new AccessChangeFeed({
      db: database.db,
      logger: createLogger('silent'),
      pollIntervalMs: 60_000,
      subscriber: subscriber as unknown as Redis,
      keyPrefix: 'p:',
      onChange: () => changes++,
    });
    await feed.start();
    await waitFor('a second subscription attempt', () => subscriber.attempts >= 2);
    expect(subscriber.attempts).toBe(2);
    subscriber.emit('message', accessChangesChannel('p:'), 'changed');
    expect(changes).toBe(1);
    feed.close();
  });
});

/** A Redis subscriber connection that subscribes at once and can be made to drop and come back. */
class ControllableSubscriber extends EventEmitter {
  status = 'ready';
  subscribe(_channel: string): Promise<number> {
    return Promise.resolve(1);
  }
}

describe('access-change feed polling', () => {
  it('sees a change committed by another connection at the next poll', async () => {
    let changes = 0;
    const feed = new AccessChangeFeed({
      db: database.db,
      logger: createLogger('silent'),
      pollIntervalMs: 10,
      latestChangeId: database.sqlite ? sqliteLatestChangeId(database.sqlite) : undefined,
      onChange: () => changes++,
    });
    await feed.start();
    const other = await openDatabase(opened.config);
    try {
      await recordAccessChange(other.db, 'key_revoked', 'key_1');
      await waitFor('the change to be seen', () => changes === 1, { intervalMs: 10 });
    } finally {
      feed.close();
      await other.close();
    }
  });

  it('polls only as a backstop while Redis delivers changes, and at its own interval again when Redis drops', async () => {
    // The feed's timers run on a fake clock: that no poll comes in a span is then certain, not a matter of timing.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    onTestFinished(() => {
      vi.useRealTimers();
    });
    let polls = 0;
    const subscriber = new ControllableSubscriber();
    const feed = new AccessChangeFeed({
      db: database.db,
      logger: createLogger('silent'),
      pollIntervalMs: 10,
      subscriber: subscriber as unknown as Redis,
      latestChangeId: () => {
        polls++;
        return 0;
      },
      onChange: () => {},
    });
    await feed.start();
    // Subscribed: the next poll is subscribedPollIntervalMs away, so none in many poll intervals.
    await vi.advanceTimersByTimeAsync(10);
    const whileSubscribed = polls;
    await vi.advanceTimersByTimeAsync(subscribedPollIntervalMs - 100);
    expect(polls).toBe(whileSubscribed);
    // The connection drops: polling resumes at once, at its own interval.
    subscriber.status = 'reconnecting';
    subscriber.emit('close');
    await vi.advanceTimersByTimeAsync(55);
    expect(polls).toBeGreaterThanOrEqual(whileSubscribed + 5);
    // Back, and subscribed again by ioredis: backstop only.
    subscriber.status = 'ready';
    subscriber.emit('ready');
    await vi.advanceTimersByTimeAsync(10);
    const afterReconnect = polls;
    await vi.advanceTimersByTimeAsync(subscribedPollIntervalMs - 100);
    expect(polls).toBe(afterReconnect);
    feed.close();
  });
});
