import fc from 'fast-check';
import { CompiledQuery } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AncestorExpiry, expirySlackMs } from '../src/api/v1/responses/conversation-expiry.js';
import { pageItems } from '../src/api/v1/responses/list-items.js';
import { createResponseObject } from '../src/api/v1/responses/response-object.js';
import {
  inputItemsOf,
  itemReferenceIds,
  normalizeInput,
  replayItems,
  resolveItemReferences,
} from '../src/api/v1/responses/stored-items.js';
import { storedResponseObject, toResponseRecord, toUnstoredRecord } from '../src/api/v1/responses/stored-response.js';
import { toChatRequest } from '../src/api/v1/responses/to-chat-request.js';
import type { OutputItem, ResponsesRequest } from '../src/api/v1/responses/types.js';
import { validateResponsesRequest } from '../src/api/v1/responses/validate-request.js';
import type { DatabaseHandle } from '../src/db/connect.js';
import { textArrayLiteral } from '../src/db/postgres-arrays.js';
import {
  deleteExpiredResponses,
  deleteResponse,
  findItems,
  findResponse,
  loadConversation,
  type ResponseRecord,
  UnstoredItem,
} from '../src/db/repositories/responses.js';
import { insertResponsesPostgres } from '../src/db/repositories/responses-postgres-writer.js';
import { createSqliteResponseWriter } from '../src/db/repositories/responses-sqlite-writer.js';
import { ApiError } from '../src/errors/api-error.js';
import { createLogger } from '../src/observability/logger.js';
import { RetentionJob } from '../src/request-log/retention.js';
import { insertTestAccounts, type OpenTestDatabase, openTestDatabase, testEngine } from './support/database.js';
import { waitFor } from './support/wait.js';

/** The stored state of /v1/responses, on SQLite and on PostgreSQL (the same file runs on both engines). */

let opened: OpenTestDatabase;
let database: DatabaseHandle;
const day = 86_400_000;
const start = Date.UTC(2026, 0, 10);

beforeAll(async () => {
  opened = await openTestDatabase('responses');
  database = opened.handle;
  await insertTestAccounts(database, ['acct_a', 'acct_b'], start);
});

afterAll(() => opened.close());

let sequence = 0;

/** Stores responses as the server does: prepared statements on SQLite, column arrays on PostgreSQL. */
async function insert(records: ResponseRecord[]): Promise<void> {
  if (database.sqlite) createSqliteResponseWriter(database.sqlite)(records);
  else await insertResponsesPostgres(database.db, records);
}

/** A finished response to `request` with `output`, as the handler would store it. */
function record(
  request: ResponsesRequest,
  output: OutputItem[],
  options: { accountId?: string; now?: number; retentionMs?: number; ancestors?: readonly AncestorExpiry[] } = {},
): ResponseRecord {
  sequence++;
  const response = {
    ...createResponseObject(request, { id: `resp_test_${sequence}`, createdAt: 1, model: request.model }),
    status: 'completed' as const,
    output,
  };
  return toResponseRecord(response, {
    accountId: options.accountId ?? 'acct_a',
    keyId: 'key_1',
    inputItems: normalizeInput(request.input),
    now: options.now ?? start,
    retentionMs: options.retentionMs ?? 30 * day,
    ...(options.ancestors ? { ancestors: options.ancestors } : {}),
  }).record;
}

const message = (id: string, text: string): OutputItem => ({
  id,
  type: 'message',
  status: 'completed',
  role: 'assistant',
  content: [{ type: 'output_text', text, annotations: [], logprobs: [] }],
});

describe('stored responses', () => {
  it('stores a response for its account only, and reads it back whole', async () => {
    const stored = record(validateResponsesRequest({ model: 'm', input: 'Hello', metadata: { k: 'v' } }), [
      message('msg_out_1', 'Hi!'),
    ]);
    await insert([stored]);
    const found = await findResponse(database.db, 'acct_a', stored.id, start + 1000);
    if (!found || found.unstored) throw new Error('the response was not stored');
    const response = storedResponseObject(found);
    expect(response).toMatchObject({ id: stored.id, object: 'response', status: 'completed', metadata: { k: 'v' } });
    expect(response.output).toEqual([message('msg_out_1', 'Hi!')]);
    // The size counted is the object as the client sees it, not the compacted column.
    const { output: _output, ...settings } = response;
    expect(stored.storedBytes).toBe(
      Buffer.byteLength(JSON.stringify(settings)) +
        Buffer.byteLength(stored.inputItems) +
        Buffer.byteLength(JSON.stringify(response.output)),
    );
    // Another account's, and an expired one, are absent in the same way.
    expect(await findResponse(database.db, 'acct_b', stored.id, start + 1000)).toBeUndefined();
    expect(await findResponse(database.db, 'acct_a', stored.id, start + 31 * day)).toBeUndefined();
    expect(await findResponse(database.db, 'acct_a', 'resp_never', start)).toBeUndefined();
  });

  it('replays a conversation across responses with its function calls, and translates it', async () => {
    const first = record(
      validateResponsesRequest({
        model: 'm',
        input: 'Weather in Paris?',
        tools: [{ type: 'function', name: 'lookup' }],
      }),
      [
        { id: 'rs_1', type: 'reasoning', status: 'completed', summary: [{ type: 'summary_text', text: 'Need data.' }] },
        {
          id: 'fc_1',
          type: 'function_call',
          status: 'completed',
          arguments: '{"city":"Paris"}',
          call_id: 'call_1',
          name: 'lookup',
        },
      ],
    );
    const secondRequest = validateResponsesRequest({
      model: 'other-model',
      previous_response_id: first.id,
      input: [{ type: 'function_call_output', call_id: 'call_1', output: 'sunny' }],
      tools: [{ type: 'function', name: 'lookup' }],
    });
    await insert([first]);
    const before = await loadConversation(database.db, 'acct_a', first.id, start + 1000);
    expect(before?.responseIds).toEqual([first.id]);
    const second = record(secondRequest, [message('msg_2', 'It is sunny.')], {
      now: start + 10 * day,
      ancestors: before?.turns,
    });
    await insert([second]);
    const third = record(
      validateResponsesRequest({ model: 'm', previous_response_id: second.id, input: 'Thanks' }),
      [message('msg_3', 'You are welcome.')],
      {
        now: start + 20 * day,
        ancestors: (await loadConversation(database.db, 'acct_a', second.id, start + 20 * day))?.turns,
      },
    );
    await insert([third]);

    const conversation = await loadConversation(database.db, 'acct_a', third.id, start + 20 * day);
    expect(conversation?.responseIds).toEqual([first.id, second.id, third.id]);
    const replayed = replayItems(conversation ?? { turns: [] });
    expect(replayed.map((item) => item.type)).toEqual([
      'message',
      'reasoning',
      'function_call',
      'function_call_output',
      'message',
      'message',
      'message',
    ]);
    const counts = conversation?.turns.map((turn) => [
      JSON.parse(turn.inputItems).length,
      JSON.parse(turn.outputItems).length,
    ]);
    expect(counts).toEqual([
      [1, 2],
      [1, 1],
      [1, 1],
    ]);
    // The function call replayed from the first response answers the output sent with the second; its reasoning goes
    // back beside it (reasoning-history.ts settles which providers get it).
    const history = replayItems(
      (await loadConversation(database.db, 'acct_a', first.id, start + 20 * day)) ?? { turns: [] },
    );
    const { request: chat } = toChatRequest(secondRequest, history);
    expect(chat.messages).toEqual([
      { role: 'user', content: 'Weather in Paris?' },
      {
        role: 'assistant',
        content: null,
        reasoning_content: 'Need data.',
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"city":"Paris"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
    ]);
    // Continuing the conversation kept its beginning alive past its own retention.
    expect(await findResponse(database.db, 'acct_a', first.id, start + 45 * day)).toBeDefined();
    // The items the third response was generated from: everything but its own output, newest first by default.
    const context = inputItemsOf(conversation as NonNullable<typeof conversation>);
    expect(context).toHaveLength(6);
    const page = pageItems(context, { limit: 4 });
    expect(page.data.map((item) => item.type)).toEqual(['message', 'message', 'function_call_output', 'function_call']);
    expect(page).toMatchObject({ object: 'list', has_more: true, first_id: context[5]?.id, last_id: context[2]?.id });
    const next = pageItems(context, { limit: 4, after: page.last_id ?? '' });
    expect(next.data.map((item) => item.id)).toEqual([context[1]?.id, context[0]?.id]);
    expect(next.has_more).toBe(false);

    expect(await loadConversation(database.db, 'acct_b', third.id, start + 20 * day)).toBeUndefined();
    // Deleting the middle response takes its items out of every conversation built on it.
    expect(await deleteResponse(database.db, 'acct_b', second.id, start + 20 * day)).toBe(false);
    expect(await deleteResponse(database.db, 'acct_a', second.id, start + 20 * day)).toBe(true);
    expect(await deleteResponse(database.db, 'acct_a', second.id, start + 20 * day)).toBe(false);
    expect(await findResponse(database.db, 'acct_a', second.id, start + 20 * day)).toBeUndefined();
    const after = await loadConversation(database.db, 'acct_a', third.id, start + 20 * day);
    expect(after?.responseIds).toEqual([third.id]);
    expect(replayItems(after ?? { turns: [] }).map((item) => item.id)).toEqual([third.itemIds[0], 'msg_3']);
  });

  it('walks a chain of hundreds of turns in order, and stops at max bytes without reading any items', async () => {
    const turns: ResponseRecord[] = [];
    let previous: string | undefined;
    for (let turn = 0; turn < 400; turn++) {
      const stored = record(
        validateResponsesRequest({ model: 'm', input: `t${turn}`, previous_response_id: previous }),
        [message(`msg_chain_${turn}`, `a${turn}`)],
      );
      turns.push(stored);
      previous = stored.id;
    }
    await insert(turns);
    const last = turns.at(-1) as ResponseRecord;
    const total = turns.reduce((sum, turn) => sum + turn.storedBytes, 0);
    const whole = await loadConversation(database.db, 'acct_a', last.id, start, total);
    expect(whole?.tooLarge).toBeUndefined();
    expect(whole?.responseIds).toEqual(turns.map((turn) => turn.id));
    expect(replayItems(whole as NonNullable<typeof whole>).map((item) => (item as { id: string }).id)).toEqual(
      turns.flatMap((turn) => turn.itemIds),
    );
    const cut = await loadConversation(database.db, 'acct_a', last.id, start, total - 1);
    expect(cut?.turns).toEqual([]);
    expect(cut?.tooLarge?.bytes).toBe(total);
    // The walk stops soon after the limit: the last turns alone are over a small one.
    // More turns than the turn limit: refused as a whole, never cut short (the walk stops past the limit).
    const long = await loadConversation(database.db, 'acct_a', last.id, start, total, 300);
    expect(long?.turns).toEqual([]);
    expect(long?.tooLarge).toBeDefined();
    expect((await loadConversation(database.db, 'acct_a', last.id, start, total, 400))?.turns).toHaveLength(400);
    const small = await loadConversation(database.db, 'acct_a', last.id, start, last.storedBytes * 2);
    expect(small?.responseIds.length).toBe(3);
    expect(small?.tooLarge?.bytes).toBe(turns.slice(-3).reduce((sum, turn) => sum + turn.storedBytes, 0));
  });

  it('finds items by id within the account for item references', async () => {
    const stored = record(validateResponsesRequest({ model: 'm', input: [{ role: 'user', content: 'Q' }] }), [
      message('msg_ref_1', 'A'),
    ]);
    const other = record(validateResponsesRequest({ model: 'm', input: 'x' }), [message('msg_ref_2', 'B')], {
      accountId: 'acct_b',
    });
    await insert([stored, other]);
    const input = validateResponsesRequest({
      model: 'm',
      input: [
        { type: 'item_reference', id: stored.itemIds[0] },
        { type: 'item_reference', id: 'msg_ref_1' },
        { role: 'user', content: 'and then?' },
      ],
    }).input;
    const ids = itemReferenceIds(input);
    const found = await findItems(database.db, 'acct_a', [...ids, 'msg_ref_2'], start + 1000);
    expect([...found.keys()].sort()).toEqual([stored.itemIds[0], 'msg_ref_1'].sort());
    expect(resolveItemReferences(input, found)).toEqual([
      { id: stored.itemIds[0], type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Q' }] },
      message('msg_ref_1', 'A'),
      { role: 'user', content: 'and then?' },
    ]);
    const elsewhere = validateResponsesRequest({
      model: 'm',
      input: [{ type: 'item_reference', id: 'msg_ref_2' }],
    }).input;
    try {
      resolveItemReferences(elsewhere, found);
      throw new Error('resolved an item of another account');
    } catch (error) {
      expect(error).toBeInstanceOf(ApiError);
      expect(error).toMatchObject({ status: 404, param: 'input[0].id', code: 'item_not_found' });
    }
    expect((await findItems(database.db, 'acct_a', ['msg_ref_1'], start + 31 * day)).size).toBe(0);
  });

  it('writes a batch byte-exactly through the engine writer: odd ids, duplicate keys, a NULL, a response over 1 MB', async () => {
    // Texts an array literal or a statement could mangle: quotes, backslashes, commas, braces, the word NULL, spaces,
    // control characters, non-ASCII and astral characters.
    const odd = [
      'a"b',
      'back\\slash',
      'c,d',
      '{e}',
      'NULL',
      'null',
      ' spaced ',
      'tab\there',
      'line\nbreak',
      'é日本😀',
      '"\\",{}',
    ];
    const json = (value: unknown) => JSON.stringify(value);
    const records: ResponseRecord[] = Array.from({ length: 120 }, (_, index) => {
      const itemIds = Array.from(
        { length: index % 9 },
        (_, item) => `${odd[(index + item) % odd.length]}_${index}_${item}`,
      );
      if (index % 5 === 0) itemIds.push(itemIds[0] ?? `only_${index}`, `only_${index}`);
      const items = itemIds.map((id) => ({ id, type: 'message', text: `${odd[index % odd.length]} \u0001 ${id}` }));
      return {
        id: `resp_batch_${index}_${odd[index % odd.length]}`,
        accountId: index % 3 === 0 ? 'acct_b' : 'acct_a',
        keyId: `key_${odd[index % odd.length]}`,
        model: `model ${odd[(index + 3) % odd.length]}`,
        previousResponseId: index % 4 === 0 ? null : `resp_batch_${index - 1}_${odd[(index + 5) % odd.length]}`,
        createdAt: start + index,
        expiresAt: start + 30 * day + index,
        // A text of JSON and one that is not: the writer takes either as it is.
        response: index % 2 === 0 ? json({ model: odd[index % odd.length], index }) : `raw ${odd.join('|')} \u0007`,
        inputItems: json(items.slice(0, 2)),
        outputItems: json(items.slice(2)),
        itemIds,
        inputCount: Math.min(2, items.length),
        storedBytes: 1000 + index,
        // Some stand for a stream, with the time its node says it runs until (a bigint on PostgreSQL).
        ...(index % 7 === 3 ? { state: 'in_progress' as const, streamingUntil: start + day + index } : {}),
      };
    });
    // Larger than a megabyte, with every character an array literal or JSON escapes.
    const largeText = `${odd.join(' ')} "quoted" \\ \n`.repeat(20_000);
    const large = {
      ...(records[7] as ResponseRecord),
      id: 'resp_batch_large',
      outputItems: json([{ text: largeText }]),
    };
    expect(Buffer.byteLength(large.outputItems)).toBeGreaterThan(1024 * 1024);
    records.push(large);
    await insert(records);

    const ids = records.map((item) => item.id);
    const rows = await database.db.selectFrom('responses').selectAll().where('id', 'in', ids).execute();
    const byId = new Map(rows.map((row) => [row.id, row]));
    for (const item of records) {
      expect(byId.get(item.id)).toEqual({
        id: item.id,
        account_id: item.accountId,
        key_id: item.keyId,
        model: item.model,
        previous_response_id: item.previousResponseId,
        created_at: item.createdAt,
        expires_at: item.expiresAt,
        input_count: item.inputCount,
        stored_bytes: item.storedBytes,
        response: item.response,
        input_items: item.inputItems,
        output_items: item.outputItems,
        item_ids: JSON.stringify(item.itemIds),
        state: item.state ?? null,
        streaming_until: item.streamingUntil ?? null,
      });
    }
    // One key per distinct item of a response: a client reusing an id within one response stores it once.
    const keyOf = (accountId: string, itemId: string, responseId: string) =>
      JSON.stringify([accountId, itemId, responseId]);
    const expectedKeys = new Set(
      records.flatMap((item) => item.itemIds.map((itemId) => keyOf(item.accountId, itemId, item.id))),
    );
    const keys = await database.db
      .selectFrom('response_item_ids')
      .selectAll()
      .where('response_id', 'in', ids)
      .execute();
    expect(keys.map((key) => keyOf(key.account_id, key.item_id, key.response_id)).sort()).toEqual(
      [...expectedKeys].sort(),
    );
    const first = records[0] as ResponseRecord;
    expect(first.itemIds).toEqual(['only_0', 'only_0']);
    expect((await findItems(database.db, first.accountId, ['only_0'], start)).get('only_0')).toMatchObject({
      id: 'only_0',
    });

    // The conversations' expiry moves on for the account's own responses, and never back.
    const earlier = records[1] as ResponseRecord;
    const later = records[2] as ResponseRecord;
    const otherAccount = records[3] as ResponseRecord;
    const continuing = {
      ...(records[4] as ResponseRecord),
      id: 'resp_batch_continuing',
      itemIds: [],
      expiresAt: later.expiresAt - 1,
      extendedIds: [earlier.id, later.id, otherAccount.id, 'resp_never_stored'],
    };
    expect([earlier.accountId, later.accountId, otherAccount.accountId, continuing.accountId]).toEqual([
      'acct_a',
      'acct_a',
      'acct_b',
      'acct_a',
    ]);
    await insert([continuing]);
    const expiries = await database.db
      .selectFrom('responses')
      .select(['id', 'expires_at'])
      .where('id', 'in', [earlier.id, later.id, otherAccount.id])
      .execute();
    expect(new Map(expiries.map((row) => [row.id, row.expires_at]))).toEqual(
      new Map([
        [earlier.id, continuing.expiresAt],
        [later.id, later.expiresAt],
        [otherAccount.id, otherAccount.expiresAt],
      ]),
    );

    // Deleting reads the keys back from item_ids: every one of them goes.
    expect(await deleteResponse(database.db, first.accountId, first.id, start)).toBe(true);
    expect(await deleteResponse(database.db, large.accountId, large.id, start)).toBe(true);
    const left = await database.db
      .selectFrom('response_item_ids')
      .select('item_id')
      .where('response_id', 'in', [first.id, large.id])
      .execute();
    expect(left).toEqual([]);
  });

  it.runIf(testEngine === 'postgres')('carries any text through an array literal to PostgreSQL as it is', async () => {
    const special = fc.constantFrom('"', '\\', ',', '{', '}', 'NULL', ' ', '\n', '\t', '\u0001', '\u001f', 'é', '😀');
    const text = fc
      .array(fc.oneof(special, fc.string({ unit: 'binary' })), { maxLength: 12 })
      .map((parts) => parts.join('').replaceAll('\u0000', ''));
    await fc.assert(
      fc.asyncProperty(fc.array(fc.option(text), { maxLength: 20 }), async (values) => {
        const result = await database.db.executeQuery<{ value: string | null }>(
          CompiledQuery.raw('select unnest($1::text[]) as value', [textArrayLiteral(values)]),
        );
        expect(result.rows.map((row) => row.value)).toEqual(values);
      }),
      { numRuns: 300 },
    );
  });

  it('deletes expired responses and their items in batches, keeping the live ones', async () => {
    const now = start + 400 * day;
    const expired = Array.from({ length: 23 }, (_, index) =>
      record(validateResponsesRequest({ model: 'm', input: `old ${index}` }), [message(`msg_old_${index}`, 'x')], {
        now: now - 2 * day,
        retentionMs: day,
      }),
    );
    const live = Array.from({ length: 3 }, (_, index) =>
      record(validateResponsesRequest({ model: 'm', input: `new ${index}` }), [message(`msg_new_${index}`, 'y')], {
        now,
        retentionMs: day,
      }),
    );
    await insert([...expired, ...live]);
    // Everything stored by the earlier tests has expired by now too.
    const before = await database.db
      .selectFrom('responses')
      .select((select) => select.fn.countAll().as('count'))
      .executeTakeFirstOrThrow();
    const deleted = await deleteExpiredResponses(database.db, now, 10, 0);
    expect(deleted).toBe(Number(before.count) - live.length);
    const responses = await database.db.selectFrom('responses').select('id').execute();
    expect(responses.map((row) => row.id).sort()).toEqual(live.map((item) => item.id).sort());
    const keys = await database.db.selectFrom('response_item_ids').select('response_id').execute();
    expect(new Set(keys.map((row) => row.response_id))).toEqual(new Set(live.map((item) => item.id)));
    expect(await deleteExpiredResponses(database.db, now, 10, 0)).toBe(0);
  });

  it('is swept by the retention job the server runs', async () => {
    const now = Date.now();
    const expired = record(validateResponsesRequest({ model: 'm', input: 'old' }), [message('msg_swept', 'x')], {
      now: now - 2 * day,
      retentionMs: day,
    });
    const live = record(validateResponsesRequest({ model: 'm', input: 'new' }), [message('msg_kept', 'y')], { now });
    await insert([expired, live]);
    const job = new RetentionJob({
      database,
      logger: createLogger('silent'),
      retentionMs: 0,
      intervalMs: 20,
      batchSize: 100,
      responsesBatchSize: 10,
    });
    job.start();
    try {
      await waitFor(
        'the expired response to be swept',
        async () => (await findItems(database.db, 'acct_a', ['msg_swept'], 0)).size === 0,
        { intervalMs: 20 },
      );
    } finally {
      await job.close();
    }
    expect((await findItems(database.db, 'acct_a', ['msg_swept', 'msg_kept'], 0)).size).toBe(1);
    expect(await findResponse(database.db, 'acct_a', live.id, now)).toBeDefined();
  });

  it('keeps a row for a response too large to store that every read reports, and deletes and expires it', async () => {
    const now = start + 500 * day;
    const tooLarge = record(validateResponsesRequest({ model: 'm', input: 'big' }), [message('msg_big', 'x')], {
      now,
      retentionMs: day,
    });
    const marker = toUnstoredRecord(tooLarge, 100);
    const deletedMarker = toUnstoredRecord(
      record(validateResponsesRequest({ model: 'm', input: 'big' }), [message('msg_big_2', 'x')], { now }),
      100,
    );
    await insert([marker, deletedMarker]);
    const unstored = { bytes: tooLarge.storedBytes, limitBytes: 100 };
    expect(await findResponse(database.db, 'acct_a', marker.id, now)).toEqual({ unstored });
    expect(await loadConversation(database.db, 'acct_a', marker.id, now)).toEqual({
      responseIds: [marker.id],
      turns: [],
      unstored,
    });
    // Its items are not kept, but a reference to one is told whose they were.
    expect((await findItems(database.db, 'acct_a', ['msg_big'], now)).get('msg_big')).toEqual(
      new UnstoredItem(marker.id, unstored),
    );
    // Another account's reads as absent.
    expect(await findResponse(database.db, 'acct_b', marker.id, now)).toBeUndefined();
    expect(await loadConversation(database.db, 'acct_b', marker.id, now)).toBeUndefined();
    expect((await findItems(database.db, 'acct_b', ['msg_big'], now)).size).toBe(0);

    expect(await deleteResponse(database.db, 'acct_a', deletedMarker.id, now)).toBe(true);
    expect((await findItems(database.db, 'acct_a', ['msg_big_2'], now)).size).toBe(0);
    expect(await findResponse(database.db, 'acct_a', deletedMarker.id, now)).toBeUndefined();
    expect(await deleteResponse(database.db, 'acct_a', deletedMarker.id, now)).toBe(false);

    expect(await deleteExpiredResponses(database.db, now + 2 * day, 10, 0)).toBeGreaterThanOrEqual(1);
    expect(await findResponse(database.db, 'acct_a', marker.id, now)).toBeUndefined();
    const keys = await database.db
      .selectFrom('response_item_ids')
      .select('item_id')
      .where('response_id', 'in', [marker.id, deletedMarker.id])
      .execute();
    expect(keys).toEqual([]);
  });
});

describe('conversation expiry', () => {
  const retentionMs = 30 * day;
  const slackMs = expirySlackMs(retentionMs);
  const minute = 60_000;
  // Later than anything the tests above stored, so their rows never take part.
  const base = start + 500 * day;

  /** The expiry of each of the responses, as stored. */
  async function expiries(ids: readonly string[]): Promise<Map<string, number>> {
    if (ids.length === 0) return new Map();
    const rows = await database.db
      .selectFrom('responses')
      .select(['id', 'expires_at'])
      .where('id', 'in', ids)
      .execute();
    return new Map(rows.map((row) => [row.id, Number(row.expires_at)]));
  }

  interface Turns {
    ids: string[];
    /** Times each response was rewritten by a later turn (its expiry changed after it was stored). */
    rewrites: Map<string, number>;
    /** Ids the later turns asked the writer to extend, all turns together. */
    extendedIdsSent: number;
  }

  /**
   * Continues a conversation (or begins one) with a turn at each of `times`, as the server does: its conversation
   * loaded, the response stored with what that read, and checks after each turn that the whole conversation stays
   * loadable until the newest response expires.
   */
  async function converse(times: readonly number[], options: { accountId?: string; after?: string } = {}) {
    const accountId = options.accountId ?? 'acct_a';
    const turns: Turns = { ids: [], rewrites: new Map(), extendedIdsSent: 0 };
    let previous = options.after;
    for (const now of times) {
      const conversation = previous ? await loadConversation(database.db, accountId, previous, now) : undefined;
      if (previous) expect(conversation?.responseIds.at(-1)).toBe(previous);
      const ancestorIds = conversation?.responseIds ?? [];
      const stored = record(
        validateResponsesRequest({ model: 'm', input: `turn at ${now}`, previous_response_id: previous }),
        [message(`msg_turn_${sequence + 1}`, 'ok')],
        { accountId, now, retentionMs, ancestors: conversation?.turns ?? [] },
      );
      turns.extendedIdsSent += stored.extendedIds?.length ?? 0;
      const before = await expiries(ancestorIds);
      await insert([stored]);
      const after = await expiries(ancestorIds);
      for (const id of ancestorIds) {
        if (after.get(id) !== before.get(id)) turns.rewrites.set(id, (turns.rewrites.get(id) ?? 0) + 1);
      }
      turns.ids.push(stored.id);
      previous = stored.id;
      // Every response of the conversation outlives the newest one's retention.
      for (const id of [...ancestorIds, stored.id])
        expect(after.get(id) ?? stored.expiresAt).toBeGreaterThanOrEqual(now + retentionMs);
      const whole = await loadConversation(database.db, accountId, stored.id, now + retentionMs - 1);
      expect(whole?.responseIds.length).toBe(ancestorIds.length + 1);
    }
    return turns;
  }

  const timesFrom = (from: number, count: number, every: number) =>
    Array.from({ length: count }, (_, index) => from + index * every);

  it('rewrites each earlier response at most once in a 40-turn conversation, not every turn', async () => {
    const turns = await converse(timesFrom(base, 40, minute));
    // Only the first response, when the second continued it; extending every ancestor each turn rewrote 780 rows.
    expect([...turns.rewrites]).toEqual([[turns.ids[0], 1]]);
    expect(turns.extendedIdsSent).toBe(1);
    // A continuation is kept the slack past its retention, a response that began nothing new exactly its retention.
    const stored = await expiries(turns.ids);
    expect(stored.get(turns.ids[39] as string)).toBe(base + 39 * minute + retentionMs + slackMs);
    expect(stored.get(turns.ids[0] as string)).toBe(base + minute + retentionMs + slackMs);
  });

  it('extends every earlier response when a conversation is continued after the slack, then none again', async () => {
    const turns = await converse(timesFrom(base + day, 40, minute));
    const last = turns.ids.at(-1) as string;
    const later = base + day + 39 * minute + slackMs + day;
    const resumed = await converse([later, later + minute], { after: last });
    expect(resumed.rewrites.size).toBe(40);
    expect([...resumed.rewrites.values()].every((count) => count === 1)).toBe(true);
    expect(resumed.extendedIdsSent).toBe(40);
    const stored = await expiries(turns.ids);
    for (const id of turns.ids) expect(stored.get(id)).toBe(later + retentionMs + slackMs);
  });

  it('bounds the rewrites of a slow conversation by its number of slack periods', async () => {
    // A turn a day for 40 days: each response is rewritten about once per slack, not once per later turn.
    const turns = await converse(timesFrom(base + 100 * day, 40, day));
    const bound = Math.ceil((39 * day) / slackMs) + 1;
    expect(Math.max(...turns.rewrites.values())).toBeLessThanOrEqual(bound);
    expect(turns.rewrites.get(turns.ids[0] as string)).toBeLessThan(39);
    // Extending every ancestor each turn sent 39 + 38 + … + 1 ids to the writer.
    expect(turns.extendedIdsSent).toBeLessThan((39 * 40) / 2 / 3);
  });

  it('does not bring back an expired response, which still ends the conversation', async () => {
    const now = base + 200 * day;
    // Stored before continuations extended what they build on (or with a shorter retention): it expires first.
    const first = record(validateResponsesRequest({ model: 'm', input: 'old' }), [message('msg_exp_1', 'a')], {
      now,
      retentionMs: day,
    });
    const second = record(
      validateResponsesRequest({ model: 'm', input: 'newer', previous_response_id: first.id }),
      [message('msg_exp_2', 'b')],
      { now, retentionMs },
    );
    await insert([first, second]);
    const later = now + 2 * day;
    expect((await loadConversation(database.db, 'acct_a', second.id, later))?.responseIds).toEqual([second.id]);
    const turns = await converse([later], { after: second.id });
    // The live response it continues is extended; the expired one before it is not part of the conversation any more.
    expect([...turns.rewrites]).toEqual([[second.id, 1]]);
    expect((await loadConversation(database.db, 'acct_a', turns.ids[0] as string, later))?.responseIds).toEqual([
      second.id,
      turns.ids[0],
    ]);
    expect((await expiries([first.id])).get(first.id)).toBe(now + day);
  });

  it("never extends another account's responses", async () => {
    const now = base + 300 * day;
    const mine = await converse([now]);
    const id = mine.ids[0] as string;
    const before = await expiries([id]);
    // An id of acct_a among acct_b's ancestors (it cannot be, loadConversation is per account): the write is scoped.
    const theirs = record(validateResponsesRequest({ model: 'm', input: 'x' }), [message('msg_other_acct', 'c')], {
      accountId: 'acct_b',
      now: now + 10 * day,
      retentionMs,
      ancestors: [{ responseId: id, expiresAt: 0 }],
    });
    expect(theirs.extendedIds).toEqual([id]);
    await insert([theirs]);
    expect(await expiries([id])).toEqual(before);
    expect(await loadConversation(database.db, 'acct_b', id, now)).toBeUndefined();
  });
});
