import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { expirySlackMs } from '../src/api/v1/responses/conversation-expiry.js';
import { jsonOf, upstreamSecret, waitForLogRows } from './support/gateway.js';
import { useGatewayWithMock } from './support/gateway-fixture.js';
import { getStored, parseEvents, postResponses } from './support/responses.js';

/**
 * POST /v1/responses through the real gateway to an OpenAI-compatible upstream, by translation to chat completions:
 * the exact upstream request, the response object, streaming in the specification's order, usage and the log row,
 * the stored state (previous_response_id, retrieve, input items, delete).
 */

const setup = useGatewayWithMock();

function lastUpstreamRequest() {
  const request = setup.mock.requests.at(-1);
  if (!request) throw new Error('the mock received nothing');
  return request;
}

const weatherTool = {
  type: 'function',
  name: 'get_weather',
  description: 'Weather of a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

describe('POST /v1/responses, JSON', () => {
  it('translates to a chat completion and answers a response object', async () => {
    const response = await postResponses(setup.gateway, {
      model: 'gpt-4o-mini',
      instructions: 'Be brief.',
      input: 'Say hello',
      max_output_tokens: 50,
      temperature: 0.5,
      metadata: { team: 'a' },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('x-request-id')).toMatch(/^req_/);
    const body = await jsonOf(response);
    expect(body).toMatchObject({
      object: 'response',
      status: 'completed',
      instructions: 'Be brief.',
      max_output_tokens: 50,
      temperature: 0.5,
      metadata: { team: 'a' },
      store: true,
      tools: [],
      tool_choice: 'auto',
      parallel_tool_calls: true,
      previous_response_id: null,
      error: null,
      incomplete_details: null,
    });
    expect(body.id).toMatch(/^resp_[0-9a-f]{32}$/);
    expect(body.output).toEqual([
      {
        id: expect.stringMatching(/^msg_/),
        type: 'message',
        status: 'completed',
        role: 'assistant',
        content: [{ type: 'output_text', text: 'Echo: Say hello', annotations: [], logprobs: [] }],
      },
    ]);
    expect(body.usage).toEqual({
      input_tokens: expect.any(Number),
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: expect.any(Number),
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: body.usage.input_tokens + body.usage.output_tokens,
    });
    const upstream = lastUpstreamRequest();
    expect(upstream.path).toBe('/v1/chat/completions');
    expect(upstream.headers.authorization).toBe(`Bearer ${upstreamSecret}`);
    expect(upstream.body).toEqual({
      model: 'mock',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Say hello' },
      ],
      max_completion_tokens: 50,
      temperature: 0.5,
    });
  });

  it('logs the call with endpoint responses, tokens and cost', async () => {
    const response = await postResponses(setup.gateway, { model: 'gpt-4o-mini', input: 'count me' });
    const requestId = response.headers.get('x-request-id') as string;
    const body = await jsonOf(response);
    const [row] = await waitForLogRows(setup.gateway, [requestId]);
    expect(row).toMatchObject({
      endpoint: 'responses',
      model: 'gpt-4o-mini',
      status: 200,
      stream: 0,
      prompt_tokens: body.usage.input_tokens,
      completion_tokens: body.usage.output_tokens,
    });
    expect(Number(row?.cost_usd)).toBeGreaterThan(0);
  });

  it('turns a tool call into a function_call item and takes its output back', async () => {
    const first = await jsonOf(
      await postResponses(setup.gateway, { model: 'tools', input: 'Weather in Paris?', tools: [weatherTool] }),
    );
    expect(first.output).toEqual([
      {
        id: expect.stringMatching(/^fc_/),
        type: 'function_call',
        status: 'completed',
        call_id: 'call_mock_1',
        name: 'get_weather',
        arguments: '{"city":"Paris","unit":"celsius"}',
      },
    ]);
    expect(lastUpstreamRequest().body.tools).toEqual([
      {
        type: 'function',
        function: {
          name: 'get_weather',
          description: 'Weather of a city',
          parameters: weatherTool.parameters,
        },
      },
    ]);
    const second = await jsonOf(
      await postResponses(setup.gateway, {
        model: 'tools',
        previous_response_id: first.id,
        input: [{ type: 'function_call_output', call_id: 'call_mock_1', output: 'sunny, 21C' }],
        tools: [weatherTool],
      }),
    );
    expect(second.previous_response_id).toBe(first.id);
    expect(second.output[0].content[0].text).toBe('The weather: sunny, 21C');
    const messages = lastUpstreamRequest().body.messages as Array<Record<string, unknown>>;
    expect(messages).toEqual([
      { role: 'user', content: 'Weather in Paris?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_mock_1',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city":"Paris","unit":"celsius"}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_mock_1', content: 'sunny, 21C' },
    ]);
  });

  it('leaves out a hosted tool and names it in x-switchboard-dropped-parameters', async () => {
    const response = await postResponses(setup.gateway, {
      model: 'gpt-4o-mini',
      input: 'hi',
      tools: [weatherTool, { type: 'web_search' }],
      reasoning: { summary: 'auto' },
      include: ['reasoning.encrypted_content'],
    });
    expect(response.status).toBe(200);
    const dropped = response.headers.get('x-switchboard-dropped-parameters') ?? '';
    expect(dropped).toContain('tools.web_search');
    expect(dropped).toContain('reasoning.summary');
    expect((lastUpstreamRequest().body.tools as unknown[]).length).toBe(1);
  });
});

describe('POST /v1/responses, streaming', () => {
  it('streams events in the specification’s order with event lines and increasing sequence numbers', async () => {
    const response = await postResponses(setup.gateway, {
      model: 'gpt-4o-mini',
      input: 'Say hello there',
      stream: true,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const events = parseEvents(await response.text());
    expect(events.at(-1)?.data).toBe('[DONE]');
    const payloads = events.slice(0, -1);
    for (const [index, { event, data }] of payloads.entries()) {
      expect(event).toBe(data.type);
      expect(data.sequence_number).toBe(index);
    }
    const types = payloads.map(({ data }) => data.type);
    const deltas = types.filter((type) => type === 'response.output_text.delta').length;
    expect(deltas).toBeGreaterThan(1);
    expect(types).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      ...Array(deltas).fill('response.output_text.delta'),
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    const completed = payloads.at(-1)?.data.response;
    expect(completed.status).toBe('completed');
    expect(completed.output[0].content[0].text).toBe('Echo: Say hello there');
    expect(completed.usage.input_tokens).toBeGreaterThan(0);
    // Usage is always asked of the upstream, for the log and limits.
    expect(lastUpstreamRequest().body.stream_options).toEqual({ include_usage: true });
  });

  it('streams a function call’s arguments as deltas and a done event', async () => {
    const response = await postResponses(setup.gateway, {
      model: 'tools',
      input: 'Weather?',
      tools: [weatherTool],
      stream: true,
    });
    const payloads = parseEvents(await response.text()).slice(0, -1);
    const types = payloads.map(({ data }) => data.type);
    expect(types).toContain('response.function_call_arguments.delta');
    const done = payloads.find(({ data }) => data.type === 'response.function_call_arguments.done')?.data;
    expect(done.arguments).toBe('{"city":"Paris","unit":"celsius"}');
    const completed = payloads.at(-1)?.data;
    expect(completed.type).toBe('response.completed');
    expect(completed.response.output[0]).toMatchObject({ type: 'function_call', call_id: 'call_mock_1' });
  });

  it('reports a failure mid-stream as an error event then response.failed', async () => {
    const response = await postResponses(setup.gateway, {
      model: 'midstream-reset',
      input: 'a long answer',
      stream: true,
    });
    expect(response.status).toBe(200);
    const events = parseEvents(await response.text());
    const payloads = events.filter(({ data }) => data !== '[DONE]').map(({ data }) => data);
    const types = payloads.map((data) => data.type);
    expect(types.slice(-2)).toEqual(['error', 'response.failed']);
    expect(payloads.at(-1).response.status).toBe('failed');
    expect(payloads.at(-1).response.error.code).toBeTruthy();
    const requestId = response.headers.get('x-request-id') as string;
    const [row] = await waitForLogRows(setup.gateway, [requestId]);
    expect(row).toMatchObject({ endpoint: 'responses', stream: 1, outcome: 'error' });
  });
});

describe('stored responses', () => {
  it('replays a stored conversation with previous_response_id, across models', async () => {
    const first = await jsonOf(await postResponses(setup.gateway, { model: 'gpt-4o-mini', input: 'My name is Ada.' }));
    const second = await jsonOf(
      await postResponses(setup.gateway, { model: 'mock', previous_response_id: first.id, input: 'What is my name?' }),
    );
    expect(second.status).toBe('completed');
    expect(lastUpstreamRequest().body.messages).toEqual([
      { role: 'user', content: 'My name is Ada.' },
      { role: 'assistant', content: 'Echo: My name is Ada.' },
      { role: 'user', content: 'What is my name?' },
    ]);
    const third = await jsonOf(
      await postResponses(setup.gateway, {
        model: 'gpt-4o-mini',
        previous_response_id: second.id,
        input: 'And again?',
      }),
    );
    expect((lastUpstreamRequest().body.messages as unknown[]).length).toBe(5);

    const retrieved = await jsonOf(await getStored(setup.gateway, third.id));
    expect(retrieved).toEqual(third);

    const items = await jsonOf(await getStored(setup.gateway, `${third.id}/input_items?order=asc&limit=2`));
    expect(items.object).toBe('list');
    expect(items.has_more).toBe(true);
    expect(items.data.map((item: { role: string }) => item.role)).toEqual(['user', 'assistant']);
    const rest = await jsonOf(
      await getStored(setup.gateway, `${third.id}/input_items?order=asc&after=${items.last_id}`),
    );
    expect(rest.data.map((item: { role: string }) => item.role)).toEqual(['user', 'assistant', 'user']);
    expect(rest.has_more).toBe(false);
    const newestFirst = await jsonOf(await getStored(setup.gateway, `${third.id}/input_items`));
    expect(newestFirst.data[0].content).toEqual([{ type: 'input_text', text: 'And again?' }]);

    const deleted = await getStored(setup.gateway, second.id, setup.gateway.key, 'DELETE');
    expect(await jsonOf(deleted)).toEqual({ id: second.id, object: 'response.deleted', deleted: true });
    expect((await getStored(setup.gateway, second.id)).status).toBe(404);
    const continued = await postResponses(setup.gateway, {
      model: 'gpt-4o-mini',
      previous_response_id: second.id,
      input: 'more',
    });
    expect(continued.status).toBe(404);
    expect((await jsonOf(continued)).error).toMatchObject({
      code: 'previous_response_not_found',
      param: 'previous_response_id',
    });
  });

  it('writes one row per turn of a long conversation, not one per earlier response (npm openai client)', async () => {
    const client = new OpenAI({ baseURL: setup.gateway.baseUrl, apiKey: setup.gateway.key, maxRetries: 0 });
    const ids: string[] = [];
    for (let turn = 0; turn < 40; turn++) {
      const response = await client.responses.create({
        model: 'gpt-4o-mini',
        input: `turn ${turn}`,
        ...(turn > 0 ? { previous_response_id: ids.at(-1) } : {}),
      });
      ids.push(response.id);
    }
    const items = await client.responses.inputItems.list(ids.at(-1) as string, { limit: 100 });
    expect(items.data).toHaveLength(79);
    const rows = await setup.gateway.gateway.database.db
      .selectFrom('responses')
      .select(['id', 'created_at', 'expires_at'])
      .where('id', 'in', ids)
      .execute();
    const byId = new Map(
      rows.map((row) => [row.id, { createdAt: Number(row.created_at), expiresAt: Number(row.expires_at) }]),
    );
    const retentionMs = setup.gateway.gateway.config.responses.retentionMs;
    const kept = retentionMs + expirySlackMs(retentionMs);
    // Each continuation still holds the expiry it was written with: no later turn rewrote it (all were within the
    // slack). The first response was rewritten once, by the second turn.
    for (const id of ids.slice(1)) expect(byId.get(id)?.expiresAt).toBe((byId.get(id)?.createdAt ?? 0) + kept);
    expect(byId.get(ids[0] as string)?.expiresAt).toBe((byId.get(ids[1] as string)?.createdAt ?? 0) + kept);
  });

  it('stores a streamed response too', async () => {
    const response = await postResponses(setup.gateway, { model: 'gpt-4o-mini', input: 'streamed', stream: true });
    const events = parseEvents(await response.text());
    const completed = events.find(({ data }) => data.type === 'response.completed')?.data.response;
    const retrieved = await jsonOf(await getStored(setup.gateway, completed.id));
    expect(retrieved.output).toEqual(completed.output);
    expect(retrieved.status).toBe('completed');
  });

  it('does not keep a response sent with store: false', async () => {
    const body = await jsonOf(
      await postResponses(setup.gateway, { model: 'gpt-4o-mini', input: 'forget me', store: false }),
    );
    expect(body.store).toBe(false);
    expect((await getStored(setup.gateway, body.id)).status).toBe(404);
    const continued = await postResponses(setup.gateway, {
      model: 'gpt-4o-mini',
      previous_response_id: body.id,
      input: 'x',
    });
    expect(continued.status).toBe(404);
    expect((await jsonOf(continued)).error.code).toBe('previous_response_not_found');
  });

  it('never stores the client’s key', async () => {
    const body = await jsonOf(await postResponses(setup.gateway, { model: 'gpt-4o-mini', input: 'secret check' }));
    await getStored(setup.gateway, body.id);
    const rows = await setup.gateway.gateway.database.db.selectFrom('responses').selectAll().execute();
    const keys = await setup.gateway.gateway.database.db.selectFrom('response_item_ids').selectAll().execute();
    const stored = JSON.stringify([rows, keys]);
    expect(stored).toContain(body.id);
    expect(stored).not.toContain(setup.gateway.key);
    expect(stored).not.toContain(upstreamSecret);
  });
});
