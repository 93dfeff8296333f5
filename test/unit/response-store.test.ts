import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newItemId, newResponseId } from '../../src/api/v1/responses/ids.js';
import {
  idCreatedAt,
  ResponseStore,
  type ResponseStoreOptions,
  responseCreatedAt,
} from '../../src/api/v1/responses/response-store.js';
import type { DatabaseHandle } from '../../src/db/connect.js';
import type { ResponseRecord } from '../../src/db/repositories/responses.js';
import { createLogger } from '../../src/observability/logger.js';
import { startSqliteWorker } from '../../src/request-log/sqlite-worker.js';
import { insertTestAccounts, type OpenTestDatabase, openTestDatabase } from '../support/database.js';

/** The batched writer of stored responses: nothing written per request, yet nothing queued is ever missed by a read. */

let opened: OpenTestDatabase;
let database: DatabaseHandle;
const logger = createLogger('silent');

beforeAll(async () => {
  // SQLite whatever the project's engine: the batched writer under test is SQLite's.
  opened = await openTestDatabase('response-store', 'sqlite');
  database = opened.handle;
  await insertTestAccounts(database, ['acct_a'], 0);
});

afterAll(() => opened.close());

/** A store on the test database that writes when a batch fills or when told to (its interval is an hour). */
function storeOf(options: Partial<ResponseStoreOptions> & { batchSize: number }): ResponseStore {
  return new ResponseStore({
    db: database.db,
    sqlite: database.sqlite,
    logger,
    flushIntervalMs: 3_600_000,
    maxQueue: 10,
    ...options,
  });
}

function record(id: string, previous: string | null = null): ResponseRecord {
  const now = Date.now();
  return {
    id,
    accountId: 'acct_a',
    keyId: 'key_a',
    model: 'm',
    previousResponseId: previous,
    createdAt: now,
    expiresAt: now + 60_000,
    response: JSON.stringify({ id, object: 'response' }),
    inputItems: JSON.stringify([{ id: `msg_in_${id}`, type: 'message', role: 'user', content: [] }]),
    outputItems: JSON.stringify([{ id: `msg_out_${id}`, type: 'message', role: 'assistant' }]),
    itemIds: [`msg_in_${id}`, `msg_out_${id}`],
    inputCount: 1,
    storedBytes: 100,
  };
}

async function rowCount(): Promise<number> {
  const rows = await database.db.selectFrom('responses').select('id').execute();
  return rows.length;
}

describe('ResponseStore', () => {
  it('writes nothing when a response is saved, and everything at a read that may need it', async () => {
    // An interval that never fires during the test: only reads and close() write.
    const store = storeOf({ batchSize: 100 });
    store.start();
    const before = await rowCount();
    store.save(record('resp_1'));
    store.save(record('resp_2', 'resp_1'));
    expect(await rowCount()).toBe(before);
    const conversation = await store.conversation('acct_a', 'resp_2');
    expect(conversation?.responseIds).toEqual(['resp_1', 'resp_2']);
    expect(await rowCount()).toBe(before + 2);

    store.save(record('resp_3'));
    expect(await store.find('acct_a', 'resp_3')).toBeDefined();
    store.save(record('resp_4'));
    expect((await store.items('acct_a', ['msg_out_resp_4'])).has('msg_out_resp_4')).toBe(true);
    store.save(record('resp_5'));
    expect(await store.delete('acct_a', 'resp_5')).toBe(true);
    store.save(record('resp_6'));
    await store.close();
    expect(await store.find('acct_a', 'resp_6')).toBeDefined();
  });

  it('writes a full batch at once, and keeps the other records when one cannot be written', async () => {
    const store = storeOf({ batchSize: 3 });
    store.save(record('resp_b1'));
    store.save(record('resp_1')); // already stored: its insert fails
    store.save(record('resp_b2'));
    await store.flush();
    expect(await store.find('acct_a', 'resp_b1')).toBeDefined();
    expect(await store.find('acct_a', 'resp_b2')).toBeDefined();
    await store.close();
  });

  it('writes a full batch by itself, after the callbacks of the request that filled it', async () => {
    const store = storeOf({ batchSize: 2 });
    const before = await rowCount();
    store.save(record('resp_s1'));
    store.save(record('resp_s2'));
    // Not inside save(): the request that filled the batch does not wait for the write.
    expect(await rowCount()).toBe(before);
    const deadline = Date.now() + 5000;
    while ((await rowCount()) < before + 2 && Date.now() < deadline) {
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(await rowCount()).toBe(before + 2);
    await store.close();
  });

  it('writes through the SQLite thread while it runs, and on the server connection once it has stopped', async () => {
    const thread = startSqliteWorker({ file: database.location, onError: () => {} });
    let written = 0;
    const store = storeOf({
      batchSize: 100,
      sqliteWorker: {
        get alive() {
          return thread.alive;
        },
        writeResponses: async (records) => {
          written += records.length;
          await thread.writeResponses(records);
        },
      },
    });
    store.save(record('resp_w1'));
    expect(await store.find('acct_a', 'resp_w1')).toBeDefined();
    expect(written).toBe(1);
    await thread.close();
    expect(thread.alive).toBe(false);
    store.save(record('resp_w2'));
    expect(await store.find('acct_a', 'resp_w2')).toBeDefined();
    expect(written).toBe(1);
    await store.close();
  });

  it('stays bounded: past max_queue the oldest unwritten record is given up', async () => {
    const store = storeOf({ batchSize: 100, maxQueue: 2 });
    store.save(record('resp_q1'));
    store.save(record('resp_q2'));
    store.save(record('resp_q3'));
    await store.close();
    expect(await store.find('acct_a', 'resp_q1')).toBeUndefined();
    expect(await store.find('acct_a', 'resp_q3')).toBeDefined();
  });
});

describe('responseCreatedAt', () => {
  it('reads the creation time out of the gateway’s response ids, and nothing out of other ids', () => {
    const time = Date.UTC(2026, 10, 27, 1, 2, 3, 456);
    expect(responseCreatedAt(newResponseId(time))).toBe(time);
    expect(responseCreatedAt('resp_zz')).toBeUndefined();
    expect(responseCreatedAt('msg_0123456789abcdef')).toBeUndefined();
    expect(idCreatedAt(newItemId('msg', time))).toBe(time);
    expect(idCreatedAt(newItemId('fc', time))).toBe(time);
    expect(idCreatedAt('msg_client-chosen')).toBeUndefined();
    expect(idCreatedAt('call_123')).toBeUndefined();
  });
});
