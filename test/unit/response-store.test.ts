import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { idCreatedAt, newItemId, newResponseId, responseCreatedAt } from '../../src/api/v1/responses/ids.js';
import { ResponseStore, type ResponseStoreOptions } from '../../src/api/v1/responses/response-store.js';
import { ResponseWriteQueue } from '../../src/api/v1/responses/response-write-queue.js';
import type { DatabaseHandle } from '../../src/db/connect.js';
import { type ResponseRecord, StreamingItem } from '../../src/db/repositories/responses.js';
import { createLogger } from '../../src/observability/logger.js';
import { startSqliteWorker } from '../../src/request-log/sqlite-worker.js';
import { insertTestAccounts, type OpenTestDatabase, openTestDatabase } from '../support/database.js';
import { waitFor } from '../support/wait.js';

/**
 * The batched writer of stored responses: nothing written per request, yet nothing queued is ever missed by a read.
 * Each test has a database of its own, so none depends on what another stored (they pass in any order:
 * `--sequence.shuffle`).
 */

let opened: OpenTestDatabase;
let database: DatabaseHandle;
const logger = createLogger('silent');

beforeEach(async () => {
  // SQLite whatever the project's engine: the batched writer under test is SQLite's.
  opened = await openTestDatabase('response-store', 'sqlite');
  database = opened.handle;
  await insertTestAccounts(database, ['acct_a'], 0);
});

afterEach(() => opened.close());

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

/** The row that stands for a response while it streams, as the stream handlers queue it (toInProgressRecord). */
function streamingRow(id: string): ResponseRecord {
  return { ...record(id), inputItems: '[]', outputItems: '[]', itemIds: [], inputCount: 0, state: 'in_progress' };
}

async function stateOf(id: string): Promise<string | null | undefined> {
  const row = await database.db.selectFrom('responses').select('state').where('id', '=', id).executeTakeFirst();
  return row ? row.state : undefined;
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
    // Its account does not exist: the database refuses it, and with it the batch's one insert.
    store.save({ ...record('resp_b_orphan'), accountId: 'acct_gone' });
    store.save(record('resp_b2'));
    await store.flush();
    expect(await store.find('acct_a', 'resp_b1')).toBeDefined();
    expect(await store.find('acct_a', 'resp_b2')).toBeDefined();
    expect(await rowCount()).toBe(2);
    await store.close();
  });

  it('keeps what the database could not take while it is away, and writes it once it is back', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _encoding, callback) {
        lines.push(String(chunk));
        callback();
      },
    });
    const store = storeOf({ batchSize: 100, logger: createLogger('warn', sink) });
    const sqlite = database.sqlite as NonNullable<typeof database.sqlite>;
    const before = await rowCount();
    // The table gone stands for a database that answers nothing: every insert fails without refusing a record.
    sqlite.exec('alter table responses rename to responses_away');
    try {
      store.save(record('resp_away_1'));
      store.save(record('resp_away_2', 'resp_away_1'));
      await store.flush();
      await store.flush();
    } finally {
      sqlite.exec('alter table responses_away rename to responses');
    }
    expect(await rowCount()).toBe(before);
    // Still queued: the next read writes them, in order.
    const conversation = await store.conversation('acct_a', 'resp_away_2');
    expect(conversation?.responseIds).toEqual(['resp_away_1', 'resp_away_2']);
    expect(lines.filter((line) => line.includes('kept and retried'))).toHaveLength(2);
    // A record the database refuses (its account does not exist) is given up, not retried forever.
    store.save({ ...record('resp_away_orphan'), accountId: 'acct_gone' });
    await store.flush();
    expect(lines.filter((line) => line.includes('kept and retried'))).toHaveLength(2);
    expect(lines.at(-1)).toContain('storing a response failed');
    // One whose id is stored already does not replace it.
    store.save({ ...record('resp_away_1'), model: 'other' });
    await store.flush();
    const kept = await database.db.selectFrom('responses').select('model').where('id', '=', 'resp_away_1').execute();
    expect(kept).toEqual([{ model: 'm' }]);
    store.save(record('resp_away_3'));
    await store.flush();
    expect(await rowCount()).toBe(before + 3);
    await store.close();
  });

  it('deletes a streamed response for good once it is queued, while its stream still sends its end', async () => {
    const store = storeOf({ batchSize: 100 });
    const snapshot = () => ({ id: 'resp_streamed' }) as never;
    store.begin('acct_a', 'resp_streamed', snapshot, streamingRow('resp_streamed'));
    store.save(record('resp_streamed'));
    // The stream has not ended (its last events are on their way): the deletion must reach the stored row.
    expect(await store.delete('acct_a', 'resp_streamed')).toBe(true);
    store.end('resp_streamed');
    await store.flush();
    expect(await store.find('acct_a', 'resp_streamed')).toBeUndefined();
    // Deleted while it streamed, before it was queued: never stored.
    const before = await rowCount();
    store.begin('acct_a', 'resp_streamed_2', snapshot, streamingRow('resp_streamed_2'));
    expect(await store.delete('acct_a', 'resp_streamed_2')).toBe(true);
    expect(await store.delete('acct_a', 'resp_streamed_2')).toBe(false);
    store.save(record('resp_streamed_2'));
    store.end('resp_streamed_2');
    await store.flush();
    expect(await store.find('acct_a', 'resp_streamed_2')).toBeUndefined();
    // Nothing of it was written: its row in progress left the queue with it.
    expect(await rowCount()).toBe(before);
    await store.close();
  });

  it('writes a stream that ends before the next write once, whole; one that outlasts a write as its row in progress', async () => {
    const node = storeOf({ batchSize: 100 });
    const other = storeOf({ batchSize: 100 });
    const snapshot = () => ({ id: 'x' }) as never;
    node.begin('acct_a', 'resp_quick', snapshot, streamingRow('resp_quick'));
    node.save(record('resp_quick'));
    await node.flush();
    expect(await stateOf('resp_quick')).toBeNull();

    node.begin('acct_a', 'resp_long', snapshot, streamingRow('resp_long'));
    await node.flush();
    // Another node finds it in progress, as it began, and cannot continue it yet.
    expect(await stateOf('resp_long')).toBe('in_progress');
    expect((await other.find('acct_a', 'resp_long'))?.response).toMatchObject({ id: 'resp_long' });
    expect((await other.conversation('acct_a', 'resp_long'))?.inProgress).toBe(true);
    expect((await other.items('acct_a', ['msg_out_resp_long'])).size).toBe(0);
    node.save(record('resp_long'));
    await node.flush();
    expect(await stateOf('resp_long')).toBeNull();
    expect((await other.conversation('acct_a', 'resp_long'))?.turns).toHaveLength(1);
    expect((await other.items('acct_a', ['msg_out_resp_long'])).size).toBe(1);

    // Deleted on another node while it streams: its end does not store it.
    node.begin('acct_a', 'resp_gone', snapshot, streamingRow('resp_gone'));
    await node.flush();
    expect(await other.delete('acct_a', 'resp_gone')).toBe(true);
    expect(await other.delete('acct_a', 'resp_gone')).toBe(false);
    // An item it shows afterwards queues its row again: that does not bring it back either.
    node.itemShown('acct_a', 'resp_gone', 'msg_after_delete');
    await node.flush();
    expect(await stateOf('resp_gone')).toBe('deleted');
    node.save(record('resp_gone'));
    await node.flush();
    expect(await stateOf('resp_gone')).toBe('deleted');
    expect(await node.find('acct_a', 'resp_gone')).toBeUndefined();
    expect(await other.conversation('acct_a', 'resp_gone')).toBeUndefined();
    expect((await other.items('acct_a', ['msg_out_resp_gone'])).size).toBe(0);
    const keys = await database.db
      .selectFrom('response_item_ids')
      .select('item_id')
      .where('response_id', '=', 'resp_gone')
      .execute();
    expect(keys).toEqual([]);

    // Deleted on its own node after its row in progress was written: marked deleted there too.
    node.begin('acct_a', 'resp_mine', snapshot, streamingRow('resp_mine'));
    await node.flush();
    expect(await node.delete('acct_a', 'resp_mine')).toBe(true);
    await node.flush();
    expect(await other.find('acct_a', 'resp_mine')).toBeUndefined();
    node.save(record('resp_mine'));
    await node.flush();
    expect(await stateOf('resp_mine')).toBe('deleted');

    // Given up without being saved: its row in progress does not outlive it.
    node.begin('acct_a', 'resp_given_up', snapshot, streamingRow('resp_given_up'));
    await node.flush();
    node.end('resp_given_up');
    await node.flush();
    expect(await other.find('acct_a', 'resp_given_up')).toBeUndefined();
    await node.close();
    await other.close();
  });

  it('keeps on its row in progress the ids of the items a stream shows, so another node knows them unended', async () => {
    const node = storeOf({ batchSize: 100 });
    const other = storeOf({ batchSize: 100 });
    const snapshot = () => ({ id: 'x' }) as never;
    node.begin('acct_a', 'resp_shown', snapshot, { ...streamingRow('resp_shown'), itemIds: ['msg_in_resp_shown'] });
    // Shown while its row waits in the queue, then after it was written.
    node.itemShown('acct_a', 'resp_shown', 'msg_early');
    await node.flush();
    node.itemShown('acct_a', 'resp_shown', 'msg_late');
    await node.flush();
    const found = await other.items('acct_a', ['msg_in_resp_shown', 'msg_early', 'msg_late', 'msg_never']);
    expect([...found.keys()].sort()).toEqual(['msg_early', 'msg_in_resp_shown', 'msg_late']);
    for (const item of found.values()) expect(item).toEqual(new StreamingItem('resp_shown', false));
    // Another account's reference finds nothing.
    expect((await other.items('acct_b', ['msg_early'])).size).toBe(0);

    // Ended: its items are found stored; one its output does not list any more is not found, and its key goes with it.
    node.save(record('resp_shown'));
    await node.flush();
    const ended = await other.items('acct_a', ['msg_in_resp_shown', 'msg_out_resp_shown', 'msg_late']);
    expect([...ended.keys()].sort()).toEqual(['msg_in_resp_shown', 'msg_out_resp_shown']);
    expect(await other.delete('acct_a', 'resp_shown')).toBe(true);
    const keys = await database.db
      .selectFrom('response_item_ids')
      .select('item_id')
      .where('response_id', '=', 'resp_shown')
      .execute();
    expect(keys).toEqual([]);

    // Deleted while it streams: its row keeps the ids whose keys were written, which expire with it.
    node.begin('acct_a', 'resp_shown_gone', snapshot, { ...streamingRow('resp_shown_gone'), itemIds: ['msg_in_gone'] });
    await node.flush();
    expect(await node.delete('acct_a', 'resp_shown_gone')).toBe(true);
    await node.flush();
    expect((await other.items('acct_a', ['msg_in_gone'])).size).toBe(0);
    const row = await database.db
      .selectFrom('responses')
      .select(['state', 'item_ids'])
      .where('id', '=', 'resp_shown_gone')
      .executeTakeFirst();
    expect(row).toEqual({ state: 'deleted', item_ids: JSON.stringify(['msg_in_gone']) });
    await node.close();
    await other.close();
  });

  it('renews the lease of its streams while they run; a stream no node renews reads as stopped once it has run out', async () => {
    const leaseMs = 400;
    const node = storeOf({ batchSize: 100, streamLeaseMs: leaseMs });
    const other = storeOf({ batchSize: 100, streamLeaseMs: leaseMs });
    const snapshot = () => ({ id: 'x' }) as never;
    node.begin('acct_a', 'resp_renewed', snapshot, { ...streamingRow('resp_renewed'), itemIds: ['msg_in_renewed'] });
    await node.flush();
    // The row a node killed mid-stream leaves: written by its queue, renewed by no one since.
    const killed = new ResponseWriteQueue({
      db: database.db,
      sqlite: database.sqlite,
      logger,
      batchSize: 100,
      flushIntervalMs: 3_600_000,
      maxQueue: 10,
    });
    killed.push({ ...streamingRow('resp_orphan'), itemIds: ['msg_in_orphan'], streamingUntil: Date.now() + leaseMs });
    await killed.close();
    const begun = Date.now();
    await waitFor('two leases and a half to pass', () => Date.now() > begun + 2.5 * leaseMs);

    expect((await other.conversation('acct_a', 'resp_renewed'))?.inProgress).toBe(true);
    expect((await other.find('acct_a', 'resp_renewed'))?.response?.status).not.toBe('failed');
    expect((await other.items('acct_a', ['msg_in_renewed'])).get('msg_in_renewed')).toEqual(
      new StreamingItem('resp_renewed', false),
    );

    expect(await other.conversation('acct_a', 'resp_orphan')).toEqual({
      responseIds: ['resp_orphan'],
      turns: [],
      stopped: true,
    });
    expect((await other.find('acct_a', 'resp_orphan'))?.response).toMatchObject({
      id: 'resp_orphan',
      status: 'failed',
      error: { code: 'server_error' },
    });
    expect((await other.items('acct_a', ['msg_in_orphan'])).get('msg_in_orphan')).toEqual(
      new StreamingItem('resp_orphan', true),
    );
    // Deleted on another node while it streams: the renewals of its lease do not bring it back.
    expect(await other.delete('acct_a', 'resp_renewed')).toBe(true);
    const deletedAt = Date.now();
    await waitFor('a renewal or two', () => Date.now() > deletedAt + leaseMs);
    expect(await stateOf('resp_renewed')).toBe('deleted');
    node.save(record('resp_renewed'));
    await node.close();
    expect(await stateOf('resp_renewed')).toBe('deleted');
    await other.close();
  });

  it('at close, leaves the rows of streams still running read as stopped at once, not when their lease runs out', async () => {
    const node = storeOf({ batchSize: 100, streamLeaseMs: 3_600_000 });
    const other = storeOf({ batchSize: 100 });
    const snapshot = () => ({ id: 'x' }) as never;
    node.begin('acct_a', 'resp_cut_written', snapshot, streamingRow('resp_cut_written'));
    await node.flush();
    node.begin('acct_a', 'resp_cut_deleted', snapshot, streamingRow('resp_cut_deleted'));
    await node.flush();
    expect(await node.delete('acct_a', 'resp_cut_deleted')).toBe(true);
    // Still queued when the node stops.
    node.begin('acct_a', 'resp_cut_queued', snapshot, streamingRow('resp_cut_queued'));
    await node.close();
    for (const id of ['resp_cut_written', 'resp_cut_queued']) {
      expect((await other.find('acct_a', id))?.response).toMatchObject({ id, status: 'failed' });
      expect((await other.conversation('acct_a', id))?.stopped).toBe(true);
    }
    expect(await other.find('acct_a', 'resp_cut_deleted')).toBeUndefined();
    // Its stream's end, after the node closed, changes nothing.
    node.save(record('resp_cut_written'));
    expect((await other.find('acct_a', 'resp_cut_written'))?.response?.status).toBe('failed');
    await other.close();
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
