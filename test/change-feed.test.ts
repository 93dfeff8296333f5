import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Redis } from 'ioredis';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AccessChangeFeed, accessChangesChannel } from '../src/access/change-feed.js';
import { parseConfig } from '../src/config/loader.js';
import { type DatabaseHandle, openDatabase } from '../src/db/connect.js';
import { createLogger } from '../src/observability/logger.js';
import { createTestDatabase, type TestDatabase } from './support/database.js';

let directory: string;
let testDatabase: TestDatabase;
let database: DatabaseHandle;

beforeEach(async () => {
  directory = mkdtempSync(path.join(tmpdir(), 'switchboard-feed-'));
  testDatabase = await createTestDatabase();
  const raw = { server: { data_dir: directory }, ...(testDatabase.url ? { database: { url: testDatabase.url } } : {}) };
  database = await openDatabase(parseConfig(raw, 'test'));
});

afterEach(async () => {
  await database.close();
  await testDatabase.drop();
  rmSync(directory, { recursive: true, force: true });
});

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
    const deadline = Date.now() + 3_000;
    while (subscriber.attempts < 2 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(subscriber.attempts).toBe(2);
    subscriber.emit('message', accessChangesChannel('p:'), 'changed');
    expect(changes).toBe(1);
    feed.close();
  });
});
