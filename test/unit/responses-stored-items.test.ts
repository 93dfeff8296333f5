import { describe, expect, it } from 'vitest';
import { pageItems, parseListQuery } from '../../src/api/v1/responses/list-items.js';
import { createResponseObject } from '../../src/api/v1/responses/response-object.js';
import { normalizeInput } from '../../src/api/v1/responses/stored-items.js';
import { checkStoredSize, storedResponseObject, toResponseRecord } from '../../src/api/v1/responses/stored-response.js';
import { validateResponsesRequest } from '../../src/api/v1/responses/validate-request.js';
import { ApiError } from '../../src/errors/api-error.js';

function thrown(run: () => unknown): ApiError {
  try {
    run();
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error('nothing was thrown');
}

describe('stored items', () => {
  it('normalizes input as OpenAI lists it: typed messages with parts, an id on every item, ids kept', () => {
    expect(normalizeInput('Hello')).toEqual([
      {
        id: expect.stringMatching(/^msg_[0-9a-f]{32}$/),
        type: 'message',
        role: 'user',
        content: [{ type: 'input_text', text: 'Hello' }],
      },
    ]);
    const items = normalizeInput(
      validateResponsesRequest({
        model: 'm',
        input: [
          { role: 'developer', content: 'rules' },
          { role: 'assistant', content: 'earlier' },
          { type: 'message', id: 'msg_kept', role: 'user', content: [{ type: 'input_text', text: 'q' }] },
          { type: 'function_call', call_id: 'c', name: 'f', arguments: '{}' },
          { type: 'function_call_output', call_id: 'c', output: 'r' },
          { type: 'reasoning', summary: [] },
          { type: 'web_search_call', status: 'completed' },
        ],
      }).input,
    );
    expect(items).toEqual([
      {
        id: expect.stringMatching(/^msg_/),
        type: 'message',
        role: 'developer',
        content: [{ type: 'input_text', text: 'rules' }],
      },
      {
        id: expect.stringMatching(/^msg_/),
        type: 'message',
        role: 'assistant',
        content: [{ type: 'output_text', text: 'earlier', annotations: [] }],
      },
      { type: 'message', id: 'msg_kept', role: 'user', content: [{ type: 'input_text', text: 'q' }] },
      { id: expect.stringMatching(/^fc_/), type: 'function_call', call_id: 'c', name: 'f', arguments: '{}' },
      { id: expect.stringMatching(/^fco_/), type: 'function_call_output', call_id: 'c', output: 'r' },
      { id: expect.stringMatching(/^rs_/), type: 'reasoning', summary: [] },
      { id: expect.stringMatching(/^item_/), type: 'web_search_call', status: 'completed' },
    ]);
    // Normalized input is still valid input (it is replayed as such).
    expect(() => validateResponsesRequest({ model: 'm', input: items })).not.toThrow();
  });

  it('measures what a response takes to store and refuses more than the limit', () => {
    const request = validateResponsesRequest({ model: 'm', input: 'x'.repeat(1000) });
    const inputItems = normalizeInput(request.input);
    const response = createResponseObject(request, { id: 'resp_1', createdAt: 1, model: 'm' });
    const { record: stored } = toResponseRecord(response, {
      accountId: 'a',
      keyId: 'k',
      inputItems,
      now: 1000,
      retentionMs: 50,
    });
    expect(stored).toMatchObject({
      id: 'resp_1',
      accountId: 'a',
      keyId: 'k',
      createdAt: 1000,
      expiresAt: 1050,
      inputCount: 1,
    });
    expect(storedResponseObject({ response: stored.response, outputItems: '[]' })).toEqual({ ...response, output: [] });
    // The input's JSON, at least: what the record's size counts besides the settings and the output.
    expect(stored.storedBytes).toBeGreaterThan(Buffer.byteLength(JSON.stringify(inputItems)));
    expect(() => checkStoredSize(stored.storedBytes, stored.storedBytes)).not.toThrow();
    expect(thrown(() => checkStoredSize(stored.storedBytes, 1024))).toMatchObject({
      status: 400,
      param: 'store',
      code: 'stored_response_too_large',
    });
  });
});

describe('listing items', () => {
  const items = ['a', 'b', 'c', 'd', 'e'].map((id) => ({ id }));
  const ids = (page: { data: Array<{ id: string }> }) => page.data.map((item) => item.id).join('');

  it('pages newest first by default, oldest first with order=asc', () => {
    expect(pageItems(items, {})).toEqual({
      object: 'list',
      data: [...items].reverse(),
      first_id: 'e',
      last_id: 'a',
      has_more: false,
    });
    const first = pageItems(items, { limit: 2 });
    expect([ids(first), first.has_more]).toEqual(['ed', true]);
    const second = pageItems(items, { limit: 2, after: first.last_id ?? '' });
    expect([ids(second), second.has_more]).toEqual(['cb', true]);
    expect(ids(pageItems(items, { limit: 2, after: 'b' }))).toBe('a');
    expect(ids(pageItems(items, { order: 'asc', limit: 3 }))).toBe('abc');
    const before = pageItems(items, { order: 'asc', limit: 2, before: 'd' });
    expect([ids(before), before.has_more]).toEqual(['bc', true]);
    expect(pageItems([], {})).toEqual({ object: 'list', data: [], first_id: null, last_id: null, has_more: false });
  });

  it('refuses a cursor that names no item of the list, naming the parameter', () => {
    expect(thrown(() => pageItems(items, { after: 'zz' }))).toMatchObject({ status: 400, param: 'after' });
    expect(thrown(() => pageItems(items, { before: 'zz' }))).toMatchObject({ status: 400, param: 'before' });
  });

  it('reads the query, refusing bad values with the parameter named', () => {
    expect(parseListQuery(new URLSearchParams('limit=5&order=asc&after=msg_1'))).toEqual({
      limit: 5,
      order: 'asc',
      after: 'msg_1',
    });
    expect(parseListQuery(new URLSearchParams(''))).toEqual({});
    expect(thrown(() => parseListQuery(new URLSearchParams('limit=0')))).toMatchObject({ status: 400, param: 'limit' });
    expect(thrown(() => parseListQuery(new URLSearchParams('limit=101')))).toMatchObject({ param: 'limit' });
    expect(thrown(() => parseListQuery(new URLSearchParams('limit=2.5')))).toMatchObject({ param: 'limit' });
    expect(thrown(() => parseListQuery(new URLSearchParams('order=newest')))).toMatchObject({ param: 'order' });
  });
});
