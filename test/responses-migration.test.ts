import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pageItems } from '../src/api/v1/responses/list-items.js';
import { ResponseStore } from '../src/api/v1/responses/response-store.js';
import { inputItemsOf, replayItems } from '../src/api/v1/responses/stored-items.js';
import { type DatabaseHandle, migrateToLatest, migratorFor } from '../src/db/connect.js';
import { createLogger } from '../src/observability/logger.js';
import { insertTestAccounts, type OpenTestDatabase, openTestDatabase } from './support/database.js';

/**
 * Migration 0014 (one row per stored response) on both engines: responses stored in the layout of 0008 (a row per
 * item) are read, continued, found by item id and deleted after it exactly as before; and its way down gives the old
 * rows back. Migration 0015's way down takes away the rows that only stand for a response (too large to store, still
 * streaming, deleted while it streamed), which the previous version would read as empty responses.
 */

let opened: OpenTestDatabase;
let database: DatabaseHandle;
const now = Date.now();

beforeAll(async () => {
  opened = await openTestDatabase('responses-migration');
  database = opened.handle;
  await insertTestAccounts(database, ['acct_a', 'acct_b'], now);
});

afterAll(() => opened.close());

function migrator() {
  return migratorFor(database);
}

const userMessage = (id: string, text: string) => ({
  id,
  type: 'message',
  role: 'user',
  content: [{ type: 'input_text', text }],
});
const answer = (id: string, text: string) => ({
  id,
  type: 'message',
  status: 'completed',
  role: 'assistant',
  content: [{ type: 'output_text', text, annotations: [], logprobs: [] }],
});
const settings = (id: string, previous: string | null) => ({
  id,
  object: 'response',
  created_at: 1,
  status: 'completed',
  model: 'm',
  previous_response_id: previous,
  metadata: { k: id },
});

interface OldResponse {
  id: string;
  accountId: string;
  previous: string | null;
  input: object[];
  output: object[];
}

const old: OldResponse[] = [
  {
    id: 'resp_old_1',
    accountId: 'acct_a',
    previous: null,
    input: [userMessage('msg_old_in_1', 'Weather in Paris?')],
    output: [{ id: 'fc_old_1', type: 'function_call', status: 'completed', call_id: 'c1', name: 'f', arguments: '{}' }],
  },
  {
    id: 'resp_old_2',
    accountId: 'acct_a',
    previous: 'resp_old_1',
    input: [
      { id: 'fco_old_1', type: 'function_call_output', call_id: 'c1', output: 'sunny' },
      // The same id twice in one response (a client reusing one): kept as it was, its key once.
      userMessage('msg_old_twice', 'a'),
      userMessage('msg_old_twice', 'b'),
    ],
    output: [answer('msg_old_out_2', 'It is sunny.')],
  },
  { id: 'resp_old_3', accountId: 'acct_b', previous: null, input: [userMessage('msg_old_in_3', 'x')], output: [] },
];

/** Writes `responses` in the layout of migration 0008: the object without output, then a row per item. */
async function insertOldLayout(responses: readonly OldResponse[]): Promise<void> {
  for (const response of responses) {
    const items = [...response.input, ...response.output];
    await database.db
      .insertInto('responses')
      .values({
        id: response.id,
        account_id: response.accountId,
        key_id: 'key_1',
        model: 'm',
        previous_response_id: response.previous,
        created_at: now,
        expires_at: now + 86_400_000,
        input_count: response.input.length,
        stored_bytes: 100,
        // The first row in the whole-object form written before settings were compacted.
        response: JSON.stringify(settings(response.id, response.previous)),
      } as never)
      .execute();
    for (const [position, item] of items.entries()) {
      await (database.db as unknown as import('kysely').Kysely<Record<string, Record<string, unknown>>>)
        .insertInto('response_items')
        .values({
          response_id: response.id,
          position,
          account_id: response.accountId,
          item_id: (item as { id: string }).id,
          item: JSON.stringify(item),
        })
        .execute();
    }
  }
}

describe('migration 0014: one row per stored response', () => {
  it('carries responses stored a row per item over, and reads them as before', async () => {
    const down = await migrator().migrateTo('0013-narrower-usage-rollups');
    expect(down.error).toBeUndefined();
    await insertOldLayout(old);
    await migrateToLatest(database);

    const store = new ResponseStore({
      db: database.db,
      sqlite: database.sqlite,
      logger: createLogger('silent'),
      batchSize: 100,
      flushIntervalMs: 3_600_000,
      maxQueue: 100,
    });
    const found = await store.find('acct_a', 'resp_old_2');
    expect(JSON.stringify(found?.response)).toBe(
      JSON.stringify({ ...settings('resp_old_2', 'resp_old_1'), output: old[1]?.output }),
    );
    expect(await store.find('acct_b', 'resp_old_2')).toBeUndefined();

    const conversation = await store.conversation('acct_a', 'resp_old_2');
    expect(conversation?.responseIds).toEqual(['resp_old_1', 'resp_old_2']);
    expect(replayItems(conversation ?? { turns: [] })).toEqual([
      ...(old[0]?.input ?? []),
      ...(old[0]?.output ?? []),
      ...(old[1]?.input ?? []),
      ...(old[1]?.output ?? []),
    ]);
    const listed = pageItems(inputItemsOf(conversation ?? { turns: [] }), { order: 'asc', after: 'fc_old_1' });
    expect(listed.data.map((item) => item.id)).toEqual(['fco_old_1', 'msg_old_twice', 'msg_old_twice']);

    const items = await store.items('acct_a', ['fc_old_1', 'msg_old_twice', 'msg_old_in_3']);
    expect(items.get('fc_old_1')).toEqual(old[0]?.output[0]);
    expect(items.has('msg_old_twice')).toBe(true);
    // Another account's item is not found.
    expect(items.has('msg_old_in_3')).toBe(false);
    expect((await store.items('acct_b', ['msg_old_in_3'])).has('msg_old_in_3')).toBe(true);

    // Deleting a migrated response deletes its items' keys with it.
    expect(await store.delete('acct_a', 'resp_old_2')).toBe(true);
    expect((await store.items('acct_a', ['msg_old_twice', 'fco_old_1'])).size).toBe(0);
    const keys = await database.db.selectFrom('response_item_ids').select('response_id').execute();
    expect(keys.map((row) => row.response_id)).not.toContain('resp_old_2');
    await store.close();
  });

  it('gives the rows of the old layout back on the way down', async () => {
    const down = await migrator().migrateTo('0013-narrower-usage-rollups');
    expect(down.error).toBeUndefined();
    const rows = (await (database.db as unknown as import('kysely').Kysely<Record<string, Record<string, unknown>>>)
      .selectFrom('response_items')
      .select(['response_id', 'position', 'account_id', 'item_id', 'item'])
      .where('response_id', '=', 'resp_old_1')
      .orderBy('position')
      .execute()) as Array<{ position: number | string; item: string; item_id: string }>;
    expect(rows.map((row) => [Number(row.position), row.item_id, JSON.parse(row.item)])).toEqual([
      [0, 'msg_old_in_1', old[0]?.input[0]],
      [1, 'fc_old_1', old[0]?.output[0]],
    ]);
    await migrateToLatest(database);
    const conversation = await loadAfterUp();
    expect(conversation?.responseIds).toEqual(['resp_old_1']);
  });
});

describe('migration 0015: rows that stand for a response', () => {
  it('takes the rows with a state away on the way down, keeping the stored responses', async () => {
    const store = new ResponseStore({
      db: database.db,
      sqlite: database.sqlite,
      logger: createLogger('silent'),
      batchSize: 100,
      flushIntervalMs: 3_600_000,
      maxQueue: 100,
    });
    const base = {
      accountId: 'acct_a',
      keyId: 'key_1',
      model: 'm',
      previousResponseId: null,
      createdAt: now,
      expiresAt: now + 86_400_000,
      response: '{}',
      inputItems: '[]',
      outputItems: '[]',
      itemIds: [],
      inputCount: 0,
      storedBytes: 6,
    };
    store.save({ ...base, id: 'resp_state_unstored', state: 'unstored' });
    store.begin('acct_a', 'resp_state_streaming', () => ({}) as never, {
      ...base,
      id: 'resp_state_streaming',
      state: 'in_progress',
    });
    await store.close();
    const before = await database.db.selectFrom('responses').select('id').where('state', 'is', null).execute();
    expect(before.length).toBeGreaterThan(0);

    const down = await migrator().migrateTo('0014-responses-one-row');
    expect(down.error).toBeUndefined();
    const ids = (await database.db.selectFrom('responses').select('id').execute()).map((row) => row.id);
    expect(ids.sort()).toEqual(before.map((row) => row.id).sort());
    await migrateToLatest(database);
  });
});

async function loadAfterUp() {
  const store = new ResponseStore({
    db: database.db,
    logger: createLogger('silent'),
    batchSize: 100,
    flushIntervalMs: 3_600_000,
    maxQueue: 100,
  });
  try {
    return await store.conversation('acct_a', 'resp_old_1');
  } finally {
    await store.close();
  }
}
