import { describe, expect, it } from 'vitest';
import { jsonOf, waitForLogRows } from './support/gateway.js';
import { useGatewayWithMock } from './support/gateway-fixture.js';
import { getStored, parseEvents, postResponses } from './support/responses.js';
import { waitFor } from './support/wait.js';

/** Bad input to /v1/responses: a 400 (or 404, 413) with the OpenAI error body and `param` naming the field. */

const setup = useGatewayWithMock({
  config: { responses: { max_stored_bytes: '4kb', max_conversation_bytes: '12kb' } },
  upstreamHandlers: {
    // A native upstream whose answer (5 KB of text) is larger than a stored response may be.
    'native-large': (request, response) => {
      const id = `resp_nativelarge${request.body.stream === true ? 's' : 'j'}`;
      const text = 'l'.repeat(5000);
      const message = { id: `msg_${id}`, type: 'message', role: 'assistant', status: 'completed', content: [] };
      const done = { ...message, content: [{ type: 'output_text', annotations: [], text }] };
      const created = { id, object: 'response', model: 'native-large', status: 'in_progress', output: [] };
      const completed = { ...created, status: 'completed', output: [done] };
      if (request.body.stream !== true) {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify(completed));
        return;
      }
      const events: Array<Record<string, unknown>> = [
        { type: 'response.created', response: created },
        { type: 'response.output_item.added', output_index: 0, item: message },
        { type: 'response.output_item.done', output_index: 0, item: done },
        { type: 'response.completed', response: completed },
      ];
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.end(
        events
          .map(
            (event, index) => `event: ${event.type}\ndata: ${JSON.stringify({ ...event, sequence_number: index })}\n\n`,
          )
          .join(''),
      );
    },
  },
  models: [
    { name: 'native-large', provider: 'mock', upstream_model: 'native-large', responses_api: 'native' },
    { name: 'failing-with-fallback', provider: 'mock', upstream_model: 'error-503', fallbacks: ['gpt-4o-mini'] },
    {
      name: 'strict-model',
      provider: 'mock',
      upstream_model: 'mock',
      parameters: { on_unsupported: 'refuse' },
    },
  ],
});

async function expectError(body: unknown, status: number, param: string | null, code?: string) {
  const before = setup.mock.requests.length;
  const response = await postResponses(setup.gateway, body);
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toBe('application/json');
  const { error } = await jsonOf(response);
  expect(error.param).toBe(param);
  expect(typeof error.message).toBe('string');
  if (code) expect(error.code).toBe(code);
  // Refused before anything reached the upstream.
  expect(setup.mock.requests.length).toBe(before);
  return error;
}

describe('POST /v1/responses refuses bad input', () => {
  it('names the field at fault', async () => {
    await expectError({ input: 'hi' }, 400, 'model');
    await expectError({ model: 'gpt-4o-mini' }, 400, 'input');
    await expectError({ model: 'gpt-4o-mini', input: 42 }, 400, 'input');
    await expectError(
      { model: 'gpt-4o-mini', input: [{ type: 'message', role: 'robot', content: 'x' }] },
      400,
      'input[0].role',
    );
    await expectError({ model: 'gpt-4o-mini', input: 'hi', temperature: 3 }, 400, 'temperature');
    await expectError({ model: 'gpt-4o-mini', input: 'hi', tools: [{ type: 'function' }] }, 400, 'tools[0].name');
    await expectError({ model: 'gpt-4o-mini', input: 'hi', background: true }, 400, 'background');
    // A tool type the gateway does not know is left out and named in a header, so it must be a plain name.
    await expectError(
      { model: 'gpt-4o-mini', input: 'hi', tools: [{ type: 'web\u0000search' }] },
      400,
      'tools[0].type',
    );
    await expectError(
      { model: 'gpt-4o-mini', input: 'hi', tools: [{ type: 'namespace', name: 'n', tools: [{ type: 'x y' }] }] },
      400,
      'tools[0].tools[0].type',
    );
  });

  it('refuses a function_call_output that answers no call', async () => {
    await expectError(
      { model: 'gpt-4o-mini', input: [{ type: 'function_call_output', call_id: 'call_nowhere', output: 'x' }] },
      400,
      'input[0].call_id',
    );
  });

  it('refuses what a model configured to refuse cannot honour, instead of leaving it out', async () => {
    await expectError(
      { model: 'strict-model', input: 'hi', tools: [{ type: 'web_search' }] },
      400,
      'tools[0]',
      'unsupported_parameter',
    );
  });

  it('refuses include of encrypted reasoning for a model configured to refuse that is not Claude', async () => {
    await expectError(
      { model: 'strict-model', input: 'hi', include: ['reasoning.encrypted_content'], stream: true },
      400,
      'include.reasoning.encrypted_content',
      'unsupported_parameter',
    );
  });

  it('gives an unknown previous_response_id the same 404 as any missing one', async () => {
    const error = await expectError(
      { model: 'gpt-4o-mini', input: 'hi', previous_response_id: 'resp_doesnotexist' },
      404,
      'previous_response_id',
      'previous_response_not_found',
    );
    expect(error.message).toBe("Previous response with id 'resp_doesnotexist' not found.");
  });

  it('refuses to store a response larger than responses.max_stored_bytes, and serves it with store: false', async () => {
    const input = 'x'.repeat(6000);
    await expectError({ model: 'gpt-4o-mini', input }, 400, 'store', 'stored_response_too_large');
    const response = await postResponses(setup.gateway, { model: 'gpt-4o-mini', input, store: false });
    expect(response.status).toBe(200);
  });

  it.each([false, true])(
    'answers a response grown too large to store with store: false, and its continuation with a 400 saying so (stream: %s)',
    async (stream) => {
      // A body well under 4 KB, echoed back: input and output together are over it.
      const input = `${stream ? 's' : 'j'} ${'w'.repeat(2200)}`;
      const response = await postResponses(setup.gateway, { model: 'gpt-4o-mini', input, stream });
      expect(response.status).toBe(200);
      let answer: { id: string; store: boolean };
      if (stream) {
        const events = parseEvents(await response.text());
        answer = events.find((event) => event.event === 'response.completed')?.data.response;
      } else {
        answer = await jsonOf(response);
      }
      expect(answer.store).toBe(false);
      const continued = await postResponses(setup.gateway, {
        model: 'gpt-4o-mini',
        previous_response_id: answer.id,
        input: 'go on',
      });
      expect(continued.status).toBe(400);
      const { error } = await jsonOf(continued);
      expect(error).toMatchObject({ code: 'stored_response_too_large', param: 'previous_response_id' });
      expect(error.message).toContain('not stored');
      expect((await getStored(setup.gateway, answer.id)).status).toBe(404);
      // A response that fits is still stored, and says so.
      const small = await jsonOf(await postResponses(setup.gateway, { model: 'gpt-4o-mini', input: 'small' }));
      expect(small.store).toBe(true);
      expect((await getStored(setup.gateway, small.id)).status).toBe(200);
    },
  );

  it.each([false, true])(
    'answers a native response grown too large to store with store: false, and its continuation with a 400 (stream: %s)',
    async (stream) => {
      const response = await postResponses(setup.gateway, { model: 'native-large', input: 'Hi', stream });
      expect(response.status).toBe(200);
      let answer: { id: string; store: boolean; output: unknown[] };
      if (stream) {
        const events = parseEvents(await response.text());
        answer = events.find((event) => event.event === 'response.completed')?.data.response;
      } else {
        answer = await jsonOf(response);
      }
      expect(answer).toMatchObject({ store: false, output: [{ type: 'message' }] });
      const continued = await postResponses(setup.gateway, {
        model: 'gpt-4o-mini',
        previous_response_id: answer.id,
        input: 'go on',
      });
      expect(continued.status).toBe(400);
      expect((await jsonOf(continued)).error).toMatchObject({
        code: 'stored_response_too_large',
        param: 'previous_response_id',
      });
    },
  );

  it('refuses to continue a conversation longer than responses.max_conversation_bytes, naming the field', async () => {
    let previous: string | undefined;
    let refused: Response | undefined;
    for (let turn = 0; turn < 10 && !refused; turn++) {
      const response = await postResponses(setup.gateway, {
        model: 'gpt-4o-mini',
        input: `${turn} ${'y'.repeat(1000)}`,
        ...(previous ? { previous_response_id: previous } : {}),
      });
      if (response.status === 200) previous = (await jsonOf(response)).id;
      else refused = response;
    }
    // About 3 KB a turn: the fifth turn would replay more than 12 KB.
    expect(refused?.status).toBe(400);
    const error = (await jsonOf(refused as Response)).error;
    expect(error).toMatchObject({ code: 'conversation_too_large', param: 'previous_response_id' });
    expect(error.message).toContain('responses.max_conversation_bytes');
    const listed = await getStored(setup.gateway, `${previous}/input_items`);
    expect(listed.status).toBe(400);
    expect((await jsonOf(listed)).error).toMatchObject({ code: 'conversation_too_large', param: 'response_id' });
    // The conversation's last response itself is still there.
    expect((await getStored(setup.gateway, previous as string)).status).toBe(200);
  });

  it('bounds what item references bring in: a small body naming one large item many times is refused', async () => {
    const stored = await jsonOf(await postResponses(setup.gateway, { model: 'gpt-4o-mini', input: 'z'.repeat(1000) }));
    const reference = { type: 'item_reference', id: stored.output[0].id };
    const sentBefore = setup.mock.requests.length;
    // About 1 KB each once resolved: 10 are more than a 4 KB stored response...
    await expectError(
      { model: 'gpt-4o-mini', input: Array(10).fill(reference) },
      400,
      'store',
      'stored_response_too_large',
    );
    // ...and 20 more than a 12 KB conversation, stored or not.
    await expectError(
      { model: 'gpt-4o-mini', input: Array(20).fill(reference), store: false },
      400,
      'input',
      'conversation_too_large',
    );
    expect(setup.mock.requests.length).toBe(sentBefore);
    // A few are fine.
    const few = await postResponses(setup.gateway, { model: 'gpt-4o-mini', input: [reference, reference] });
    expect(few.status).toBe(200);
  });

  it('refuses an unknown model with 404 model_not_found', async () => {
    await expectError({ model: 'nope', input: 'hi' }, 404, 'model', 'model_not_found');
  });

  it('answers bad list parameters with 400 naming them', async () => {
    const created = await jsonOf(await postResponses(setup.gateway, { model: 'gpt-4o-mini', input: 'hi' }));
    for (const [query, param] of [
      ['limit=0', 'limit'],
      ['limit=abc', 'limit'],
      ['order=sideways', 'order'],
    ]) {
      const response = await getStored(setup.gateway, `${created.id}/input_items?${query}`);
      expect(response.status).toBe(400);
      expect((await jsonOf(response)).error.param).toBe(param);
    }
  });

  it('surfaces an upstream failure before the stream as an HTTP error', async () => {
    const response = await postResponses(setup.gateway, { model: 'error-400', input: 'hi', stream: true });
    expect(response.status).toBe(400);
    expect((await jsonOf(response)).error.message).toContain('mock upstream error 400');
  });

  it('answers an upstream 200 that is no completion with 502, as chat does', async () => {
    for (const model of ['garbage', 'error-in-200']) {
      const response = await postResponses(setup.gateway, { model, input: 'hi', store: false });
      expect(response.status, model).toBe(502);
      const { error } = await jsonOf(response);
      expect(error.type, model).toBe('server_error');
      const chat = await fetch(`${setup.gateway.baseUrl}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${setup.gateway.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(chat.status, model).toBe(502);
      expect((await jsonOf(chat)).error.message, model).toBe(error.message);
    }
  });
});

describe('POST /v1/responses shares chat’s limits, fallbacks and cancellation', () => {
  it('is refused with 429 past a key’s request limit', async () => {
    const { key } = await setup.gateway.newKey({ name: 'rpm-1', limits: { requestsPerMinute: 1 } });
    expect((await postResponses(setup.gateway, { model: 'gpt-4o-mini', input: 'one' }, key)).status).toBe(200);
    const refused = await postResponses(setup.gateway, { model: 'gpt-4o-mini', input: 'two' }, key);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await jsonOf(refused)).error.code).toBe('rate_limit_exceeded');
  });

  it('falls back to the next model when the first fails', async () => {
    const response = await postResponses(setup.gateway, { model: 'failing-with-fallback', input: 'hi' });
    expect(response.status).toBe(200);
    expect((await jsonOf(response)).output[0].content[0].text).toBe('Echo: hi');
    const [row] = await waitForLogRows(setup.gateway, [response.headers.get('x-request-id') as string]);
    expect(row).toMatchObject({ endpoint: 'responses', status: 200 });
  });

  it('aborts the upstream when the client goes away mid-stream, logged as cancelled', async () => {
    const response = await postResponses(setup.gateway, { model: 'slow-stream', input: 'long', stream: true });
    const requestId = response.headers.get('x-request-id') as string;
    const reader = response.body?.getReader();
    await reader?.read();
    await reader?.cancel();
    const upstream = setup.mock.requests.at(-1);
    await waitFor('the upstream request to be aborted', () => upstream?.aborted);
    const [row] = await waitForLogRows(setup.gateway, [requestId]);
    expect(row).toMatchObject({ endpoint: 'responses', outcome: 'cancelled', status: 499 });
  });
});
