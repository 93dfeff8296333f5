import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { jsonOf, upstreamSecret, waitForLogRows } from './support/gateway.js';
import { useGatewayWithMock } from './support/gateway-fixture.js';
import { getStored, parseEvents, postResponses } from './support/responses.js';

/**
 * /v1/responses over every provider type: Anthropic and Gemini through their chat translation, and an
 * OpenAI-compatible upstream marked `responses_api: native`, to which the body goes as it came (reasoning items and
 * encrypted_content untouched) and whose answer is relayed, stored and continued.
 */

const fixtures = path.resolve(import.meta.dirname, 'fixtures/responses');
const nativeJson = readFileSync(path.join(fixtures, 'native-response.json'), 'utf8');
const nativeSse = readFileSync(path.join(fixtures, 'native-stream.sse'), 'utf8');

let nativeCount = 0;

const setup = useGatewayWithMock({
  providerMocks: ['mock', 'tools'],
  upstreamHandlers: {
    // Each native answer gets an id of its own, as a real upstream's would.
    'native-upstream': (request, response) => {
      nativeCount++;
      const id = `resp_native${nativeCount}`;
      if (request.body.stream === true) {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.end(nativeSse.replaceAll('resp_68f0native', id));
        return;
      }
      const text = nativeJson.replace('resp_68f0native', id);
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      response.end(text);
    },
    // A native upstream whose response object leaves out fields the gateway fills in for its own (model, created_at).
    'native-sparse': (_request, response) => {
      const text = JSON.stringify({ id: 'resp_nativesparse', object: 'response', status: 'completed', output: [] });
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      response.end(text);
    },
    // A native upstream whose stream breaks after response.created: the connection is cut.
    'native-broken': (_request, response) => {
      const created = {
        id: 'resp_nativebroken',
        object: 'response',
        model: 'native-broken',
        status: 'in_progress',
        output: [],
      };
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write(
        `event: response.created\ndata: ${JSON.stringify({ type: 'response.created', sequence_number: 0, response: created })}\n\n`,
        () => response.socket?.destroy(),
      );
    },
    // A native upstream whose stream breaks after a reasoning item and the first text of a message.
    'native-broken-midway': (_request, response) => {
      const events = nativeSse.replaceAll('resp_68f0native', 'resp_nativemidway').split('\n\n');
      // Up to the message's first delta ("Hi there."), before its text is done.
      const upToDelta = events.findIndex((event) => event.includes('response.output_text.delta'));
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write(`${events.slice(0, upToDelta + 1).join('\n\n')}\n\n`, () => response.socket?.destroy());
    },
    // A native upstream whose response fails, reported in its own stream.
    'native-failing': (_request, response) => {
      const created = { id: 'resp_nativefail', object: 'response', status: 'in_progress', output: [] };
      const failed = { ...created, status: 'failed', error: { code: 'server_error', message: 'the model crashed' } };
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.end(
        `event: response.created\ndata: ${JSON.stringify({ type: 'response.created', sequence_number: 0, response: created })}\n\n` +
          `event: response.failed\ndata: ${JSON.stringify({ type: 'response.failed', sequence_number: 1, response: failed })}\n\n`,
      );
    },
  },
  models: [
    { name: 'native-model', provider: 'mock', upstream_model: 'native-upstream', responses_api: 'native' },
    { name: 'native-failing', provider: 'mock', upstream_model: 'native-failing', responses_api: 'native' },
    { name: 'native-broken', provider: 'mock', upstream_model: 'native-broken', responses_api: 'native' },
    {
      name: 'native-broken-midway',
      provider: 'mock',
      upstream_model: 'native-broken-midway',
      responses_api: 'native',
    },
    { name: 'native-sparse', provider: 'mock', upstream_model: 'native-sparse', responses_api: 'native' },
  ],
});

describe.each(['claude-', 'gemini-'])('/v1/responses translated for %s models', (prefix) => {
  it('answers JSON', async () => {
    const body = await jsonOf(await postResponses(setup.gateway, { model: `${prefix}mock`, input: 'Say hello' }));
    expect(body.status).toBe('completed');
    expect(body.output.at(-1).type).toBe('message');
    expect(body.output.at(-1).content[0].text.length).toBeGreaterThan(0);
    expect(body.usage.input_tokens).toBeGreaterThan(0);
  });

  it('streams, with a function call and its output round trip', async () => {
    const tools = [
      {
        type: 'function',
        name: 'get_weather',
        parameters: { type: 'object', properties: { city: { type: 'string' } } },
      },
    ];
    const response = await postResponses(setup.gateway, {
      model: `${prefix}tools`,
      input: 'Weather in Paris?',
      tools,
      stream: true,
    });
    const events = parseEvents(await response.text()).filter(({ data }) => data !== '[DONE]');
    for (const [index, { event, data }] of events.entries()) {
      expect(event).toBe(data.type);
      expect(data.sequence_number).toBe(index);
    }
    const completed = events.at(-1)?.data;
    expect(completed.type).toBe('response.completed');
    const call = completed.response.output.find((item: { type: string }) => item.type === 'function_call');
    expect(call.name).toBe('get_weather');
    const second = await jsonOf(
      await postResponses(setup.gateway, {
        model: `${prefix}tools`,
        previous_response_id: completed.response.id,
        input: [{ type: 'function_call_output', call_id: call.call_id, output: 'sunny' }],
        tools,
      }),
    );
    expect(second.status).toBe('completed');
    expect(second.output.at(-1).type).toBe('message');
  });

  it('names what the provider refuses by the client’s Responses field, not the translated chat request’s', async () => {
    const upstreamCalls = () =>
      setup.providerMocks.anthropic.requests.length + setup.providerMocks.gemini.requests.length;
    const before = upstreamCalls();
    for (const stream of [false, true]) {
      const response = await postResponses(setup.gateway, {
        model: `${prefix}mock`,
        instructions: 'be brief',
        input: [
          { type: 'message', role: 'user', content: 'Weather?' },
          { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: 'not json' },
          { type: 'function_call_output', call_id: 'call_1', output: 'sunny' },
        ],
        stream,
      });
      expect(response.status).toBe(400);
      const { error } = await jsonOf(response);
      // The chat request had the instructions first and the call in messages[2].tool_calls[0]: not the client's.
      expect(error).toMatchObject({ param: 'input[1].arguments', code: 'invalid_value' });
      expect(error.message).toBe("Invalid 'input[1].arguments': expected a JSON object encoded as a string.");
    }
    expect(upstreamCalls()).toBe(before);
  });
});

describe('/v1/responses forwarded natively', () => {
  it('sends the body as it came (model changed) and answers the upstream’s response', async () => {
    const reasoning = { type: 'reasoning', id: 'rs_prev', summary: [], encrypted_content: 'gAAAA-opaque' };
    const request = {
      model: 'native-model',
      input: [reasoning, { role: 'user', content: 'Hi' }, { type: 'future_item', payload: 1 }],
      include: ['reasoning.encrypted_content'],
      reasoning: { effort: 'high', summary: 'auto' },
      store: false,
    };
    const response = await postResponses(setup.gateway, request);
    expect(response.status).toBe(200);
    expect(response.headers.get('x-switchboard-dropped-parameters')).toBeNull();
    const body = await jsonOf(response);
    expect(body.output[0]).toEqual({
      id: 'rs_68f0a',
      type: 'reasoning',
      summary: [],
      encrypted_content: 'gAAAAABo-encrypted',
    });
    const upstream = setup.mock.requests.at(-1);
    expect(upstream?.path).toBe('/v1/responses');
    expect(upstream?.headers.authorization).toBe(`Bearer ${upstreamSecret}`);
    expect(upstream?.body).toEqual({ ...request, model: 'native-upstream' });
    const [row] = await waitForLogRows(setup.gateway, [response.headers.get('x-request-id') as string]);
    expect(row).toMatchObject({ endpoint: 'responses', prompt_tokens: 120, completion_tokens: 30 });
  });

  it('relays the upstream’s stream and stores it, then continues it with the history in input', async () => {
    const response = await postResponses(setup.gateway, { model: 'native-model', input: 'Hi', stream: true });
    const events = parseEvents(await response.text());
    expect(events.at(-1)?.data).toBe('[DONE]');
    const completed = events.find(({ data }) => data.type === 'response.completed')?.data.response;
    expect(completed.output[0].encrypted_content).toBe('gAAAAABo-encrypted');
    const stored = await jsonOf(await getStored(setup.gateway, completed.id));
    expect(stored.output).toEqual(completed.output);

    const next = await postResponses(setup.gateway, {
      model: 'native-model',
      previous_response_id: completed.id,
      input: 'More',
    });
    expect(next.status).toBe(200);
    const upstream = setup.mock.requests.at(-1)?.body as Record<string, unknown>;
    expect(upstream.previous_response_id).toBeUndefined();
    const input = upstream.input as Array<Record<string, unknown>>;
    expect(input.map((item) => item.type ?? item.role)).toEqual(['message', 'reasoning', 'message', 'user']);
    expect(input[1]?.encrypted_content).toBe('gAAAAABo-encrypted');
  });

  it('relays an upstream’s response.failed as it came, and logs the request as failed', async () => {
    const response = await postResponses(setup.gateway, {
      model: 'native-failing',
      input: 'Hi',
      stream: true,
      store: false,
    });
    const events = parseEvents(await response.text());
    expect(events.map(({ event }) => event)).toEqual(['response.created', 'response.failed', undefined]);
    const [row] = await waitForLogRows(setup.gateway, [response.headers.get('x-request-id') as string]);
    expect(row).toMatchObject({ endpoint: 'responses', outcome: 'error', error_code: 'upstream_error' });
  });

  it('stores a native stream that broke as failed, as a translated one is', async () => {
    const response = await postResponses(setup.gateway, { model: 'native-broken', input: 'Hi', stream: true });
    const events = parseEvents(await response.text());
    expect(events.map(({ event }) => event)).toEqual(['response.created', 'error', 'response.failed', undefined]);
    // Stored, it is shown under the gateway's own id, not the upstream's.
    const id = events[0]?.data.response.id;
    expect(id).not.toBe('resp_nativebroken');
    expect(events[2]?.data.response.id).toBe(id);
    const stored = await getStored(setup.gateway, id);
    expect(stored.status).toBe(200);
    const body = await jsonOf(stored);
    expect(body).toMatchObject({ id, status: 'failed' });
    expect(body.error.code).toBeTypeOf('string');
  });

  it('stores a native stream that broke with the output its client had, as a translated one is', async () => {
    const response = await postResponses(setup.gateway, { model: 'native-broken-midway', input: 'Hi', stream: true });
    const events = parseEvents(await response.text());
    expect(events.at(-2)?.event).toBe('response.failed');
    const expectedOutput = [
      { id: 'rs_68f0a', type: 'reasoning', summary: [], encrypted_content: 'gAAAAABo-encrypted' },
      {
        id: 'msg_68f0b',
        type: 'message',
        role: 'assistant',
        status: 'incomplete',
        content: [{ type: 'output_text', annotations: [], logprobs: [], text: 'Hi there.' }],
      },
    ];
    // The client's own response.failed says what it had, and so does the stored response.
    expect(events.at(-2)?.data.response.output).toEqual(expectedOutput);
    const id = events.at(-2)?.data.response.id;
    const stored = await getStored(setup.gateway, id);
    expect(stored.status).toBe(200);
    const body = await jsonOf(stored);
    expect(body).toMatchObject({ id, status: 'failed', error: { code: expect.any(String) } });
    expect(body.output).toEqual(expectedOutput);
    // A continuation replays it: the message's text goes upstream.
    const continued = await postResponses(setup.gateway, {
      model: 'gpt-4o-mini',
      previous_response_id: id,
      input: 'go on',
    });
    expect(continued.status).toBe(200);
    expect(setup.mock.requests.at(-1)?.body.messages).toContainEqual({ role: 'assistant', content: 'Hi there.' });
  });

  it('keeps a conversation whole through native turns (the upstream never saw previous_response_id)', async () => {
    const first = await jsonOf(await postResponses(setup.gateway, { model: 'native-model', input: 'Turn one.' }));
    const second = await jsonOf(
      await postResponses(setup.gateway, { model: 'native-model', previous_response_id: first.id, input: 'Turn two.' }),
    );
    const stored = await jsonOf(await getStored(setup.gateway, second.id));
    expect(stored.previous_response_id).toBe(first.id);
    const third = await postResponses(setup.gateway, {
      model: 'gpt-4o-mini',
      previous_response_id: second.id,
      input: 'Turn three.',
    });
    expect(third.status).toBe(200);
    const sent = setup.mock.requests.at(-1)?.body.messages as Array<{ role: string; content: unknown }>;
    const users = sent.filter((message) => message.role === 'user').map((message) => message.content);
    expect(users).toEqual(['Turn one.', 'Turn two.', 'Turn three.']);
  });

  it('stores a native answer that leaves out its model, so it can be retrieved and continued', async () => {
    const answer = await postResponses(setup.gateway, { model: 'native-sparse', input: 'Sparse.' });
    expect(answer.status).toBe(200);
    const stored = await getStored(setup.gateway, 'resp_nativesparse');
    expect(stored.status).toBe(200);
    expect((await jsonOf(stored)).id).toBe('resp_nativesparse');
    const continued = await postResponses(setup.gateway, {
      model: 'gpt-4o-mini',
      previous_response_id: 'resp_nativesparse',
      input: 'Go on.',
    });
    expect(continued.status).toBe(200);
  });
});
