import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { chatBody, postChat, startTestGateway, waitForLogRows } from './support/gateway.js';
import { useGatewayWithMock } from './support/gateway-fixture.js';
import { holdRequests } from './support/held-requests.js';
import { startMockUpstream } from './support/mock-openai-upstream.js';
import { expectOpenAiError } from './support/openai-error.js';
import { readSse } from './support/sse.js';
import { waitFor } from './support/wait.js';

// A client that takes nothing for a second is given up (the 'stops taking the stream' test).
const setup = useGatewayWithMock({
  config: { limits: { max_body_size: '2mb' }, server: { send_timeout: '1s' } },
  models: [
    { name: 'flood', provider: 'mock-patient', upstream_model: 'flood' },
    { name: 'redirecting', provider: 'mock', upstream_model: 'redirecting' },
  ],
});

/** The body of a raw HTTP/1.1 answer, with chunked transfer encoding undone. */
function httpBodyOf(raw: string): string {
  const headerEnd = raw.indexOf('\r\n\r\n');
  let rest = raw.slice(headerEnd + 4);
  if (!/\r\ntransfer-encoding: chunked\r\n/i.test(raw.slice(0, headerEnd + 2))) return rest;
  let body = '';
  for (;;) {
    const lineEnd = rest.indexOf('\r\n');
    const size = Number.parseInt(rest.slice(0, lineEnd), 16);
    if (!(size > 0)) return body;
    body += rest.slice(lineEnd + 2, lineEnd + 2 + size);
    rest = rest.slice(lineEnd + 2 + size + 2);
  }
}

describe('bad requests', () => {
  it('invalid JSON -> 400 with the OpenAI message', async () => {
    const error = await expectOpenAiError(await postChat(setup.gateway, '{"model": "mock", "messages": ['), 400);
    expect(error.message).toContain('We could not parse the JSON body of your request.');
    expect(error.type).toBe('invalid_request_error');
  });

  it('an empty body, a JSON array and invalid UTF-8 -> 400', async () => {
    await expectOpenAiError(await postChat(setup.gateway, ''), 400);
    const array = await expectOpenAiError(await postChat(setup.gateway, '[]'), 400);
    expect(array.message).toContain('must be a JSON object');
    const bytes = Buffer.concat([
      Buffer.from('{"model":"mock","messages":[{"role":"user","content":"'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('"}]}'),
    ]);
    const response = await fetch(`${setup.gateway.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${setup.gateway.key}`, 'content-type': 'application/json' },
      body: bytes,
    });
    expect((await expectOpenAiError(response, 400)).code).toBe('invalid_encoding');
  });

  it('missing fields name the parameter', async () => {
    const messages = await expectOpenAiError(await postChat(setup.gateway, { model: 'mock' }), 400);
    expect(messages).toMatchObject({
      param: 'messages',
      code: 'missing_required_parameter',
      message: "Missing required parameter: 'messages'.",
    });
    const model = await expectOpenAiError(
      await postChat(setup.gateway, { messages: [{ role: 'user', content: 'hi' }] }),
      400,
    );
    expect(model).toMatchObject({ param: 'model', code: 'missing_required_parameter' });
    const toolId = await expectOpenAiError(
      await postChat(setup.gateway, chatBody('mock', { messages: [{ role: 'tool', content: 'x' }] })),
      400,
    );
    expect(toolId.param).toBe('messages[0].tool_call_id');
  });

  it('wrong types and out-of-range values name the parameter', async () => {
    const temperature = await expectOpenAiError(
      await postChat(setup.gateway, chatBody('mock', { temperature: 3 })),
      400,
    );
    expect(temperature).toMatchObject({ param: 'temperature', code: 'decimal_above_max_value' });
    const content = await expectOpenAiError(
      await postChat(setup.gateway, { model: 'mock', messages: [{ role: 'user', content: 42 }] }),
      400,
    );
    expect(content).toMatchObject({ param: 'messages[0].content', code: 'invalid_type' });
    const role = await expectOpenAiError(
      await postChat(setup.gateway, { model: 'mock', messages: [{ role: 'robot', content: 'x' }] }),
      400,
    );
    expect(role.param).toBe('messages[0].role');
    const empty = await expectOpenAiError(await postChat(setup.gateway, { model: 'mock', messages: [] }), 400);
    expect(empty).toMatchObject({ param: 'messages', code: 'empty_array' });
    const n = await expectOpenAiError(await postChat(setup.gateway, chatBody('mock', { n: 0 })), 400);
    expect(n.param).toBe('n');
    const streamOptions = await expectOpenAiError(
      await postChat(setup.gateway, chatBody('mock', { stream_options: { include_usage: true } })),
      400,
    );
    expect(streamOptions.param).toBe('stream_options');
    const stop = await expectOpenAiError(
      await postChat(setup.gateway, chatBody('mock', { stop: ['a', 'b', 'c', 'd', 'e'] })),
      400,
    );
    expect(stop.param).toBe('stop');
    const tools = await expectOpenAiError(
      await postChat(
        setup.gateway,
        chatBody('mock', { tools: [{ type: 'function', function: { name: 'bad name!' } }] }),
      ),
      400,
    );
    expect(tools.param).toBe('tools[0].function.name');
  });

  it('unknown models -> 404 model_not_found, and nothing is sent upstream', async () => {
    const before = setup.mock.requests.length;
    const error = await expectOpenAiError(await postChat(setup.gateway, chatBody('no-such-model')), 404);
    expect(error).toMatchObject({ code: 'model_not_found', type: 'invalid_request_error' });
    expect(error.message).toBe('The model `no-such-model` does not exist or you do not have access to it.');
    expect(setup.mock.requests.length).toBe(before);
  });

  it('accepts a 1.5 MB body (coding agents send these) and refuses one over the limit with 413', async () => {
    const big = 'x'.repeat(1_500_000);
    const ok = await postChat(setup.gateway, { model: 'mock', messages: [{ role: 'user', content: big }] });
    expect(ok.status).toBe(200);
    const tooBig = 'y'.repeat(2_200_000);
    const error = await expectOpenAiError(
      await postChat(setup.gateway, { model: 'mock', messages: [{ role: 'user', content: tooBig }] }),
      413,
    );
    expect(error.code).toBe('request_too_large');
  });

  it('refuses an oversized chunked upload (no Content-Length) with 413', async () => {
    // A raw socket keeps every byte the server sent even when it stops reading the upload and the writes fail; only
    // an answer actually received counts, so a reset or a crash before it fails the test.
    const url = new URL(setup.gateway.url);
    const received = await new Promise<string>((resolve) => {
      const socket = connect(Number(url.port), url.hostname);
      let answer = '';
      socket.on('data', (chunk) => {
        answer += chunk.toString('latin1');
      });
      socket.on('error', () => socket.destroy());
      socket.on('close', () => resolve(answer));
      socket.write(
        `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${setup.gateway.key}\r\n` +
          'Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n',
      );
      const piece = Buffer.alloc(256 * 1024, 'z');
      let sent = 0;
      const pump = () => {
        while (sent < 12 && !socket.destroyed) {
          sent++;
          const written = socket.write(`${piece.length.toString(16)}\r\n${piece}\r\n`);
          if (!written) return void socket.once('drain', pump);
        }
        if (!socket.destroyed) socket.end('0\r\n\r\n');
      };
      pump();
    });
    expect(received).toMatch(/^HTTP\/1\.1 413 /);
    const body = JSON.parse(httpBodyOf(received));
    expect(body.error).toMatchObject({ code: 'request_too_large', type: 'invalid_request_error' });
  });

  it('unknown routes and wrong methods get OpenAI-shaped errors', async () => {
    const unknown = await expectOpenAiError(
      await fetch(`${setup.gateway.baseUrl}/embeddings-typo`, { method: 'POST' }),
      404,
    );
    expect(unknown.message).toContain('Invalid URL');
    await expectOpenAiError(
      await fetch(`${setup.gateway.baseUrl}/chat/completions`, {
        headers: { authorization: `Bearer ${setup.gateway.key}` },
      }),
      405,
    );
    await expectOpenAiError(await fetch(`${setup.gateway.url}/nothing-here`), 404);
  });
});

describe('upstream failures', () => {
  it('passes upstream 4xx through in OpenAI shape', async () => {
    const error = await expectOpenAiError(await postChat(setup.gateway, chatBody('error-400')), 400);
    expect(error).toMatchObject({ code: 'context_length_exceeded', message: 'mock upstream error 400' });
    await expectOpenAiError(await postChat(setup.gateway, chatBody('error-422')), 422);
  });

  it('does not follow an upstream redirect: 502 naming it and the base_url, JSON or stream', async () => {
    setup.mock.on('redirecting', (_request, response) => {
      const body = JSON.stringify({ id: 'looks-like', object: 'chat.completion', choices: [] });
      response.writeHead(301, {
        location: 'https://elsewhere.example/v1/chat/completions?key=sk-upstream-query-secret',
        'content-type': 'application/json',
      });
      response.end(body);
    });
    for (const stream of [false, true]) {
      const error = await expectOpenAiError(await postChat(setup.gateway, chatBody('redirecting', { stream })), 502);
      expect(error.code).toBe('upstream_error');
      expect(error.message).toContain('301, a redirect to https://elsewhere.example/v1/chat/completions');
      expect(error.message).toContain('base_url');
      expect(error.message).not.toContain('sk-upstream-query-secret');
    }
  });

  it('passes upstream 429 through with retry-after and retry-after-ms', async () => {
    const response = await postChat(setup.gateway, chatBody('error-429'));
    expect(response.headers.get('retry-after')).toBe('7');
    expect(response.headers.get('retry-after-ms')).toBe('7000');
    const error = await expectOpenAiError(response, 429);
    expect(error.code).toBe('rate_limit_exceeded');
  });

  it("turns the upstream refusing the gateway's own credentials into 502, not a 401 for the client", async () => {
    const error = await expectOpenAiError(await postChat(setup.gateway, chatBody('error-401')), 502);
    expect(error.code).toBe('upstream_auth_failed');
    expect(error.message).not.toContain('sk-upstream');
    await expectOpenAiError(await postChat(setup.gateway, chatBody('error-404')), 502);
  });

  it('maps upstream 5xx to 502, overload (503/529) to 503, non-JSON to 502', async () => {
    expect((await expectOpenAiError(await postChat(setup.gateway, chatBody('error-500')), 502)).code).toBe(
      'upstream_error',
    );
    expect((await expectOpenAiError(await postChat(setup.gateway, chatBody('error-503')), 503)).code).toBe(
      'upstream_overloaded',
    );
    expect((await expectOpenAiError(await postChat(setup.gateway, chatBody('error-529')), 503)).type).toBe(
      'server_error',
    );
    await expectOpenAiError(await postChat(setup.gateway, chatBody('garbage')), 502);
    await expectOpenAiError(await postChat(setup.gateway, chatBody('html-502')), 502);
    // An error disguised as a 200 is still an error.
    await expectOpenAiError(await postChat(setup.gateway, chatBody('error-in-200')), 502);
  });

  it('maps a connection reset to 502 and a hang to 504', async () => {
    expect((await expectOpenAiError(await postChat(setup.gateway, chatBody('reset')), 502)).code).toBe(
      'upstream_unreachable',
    );
    // The 504 itself proves the gateway's first-byte timeout fired: the mock never answers "hang" at all.
    expect((await expectOpenAiError(await postChat(setup.gateway, chatBody('hang')), 504)).code).toBe(
      'upstream_timeout',
    );
  });

  it('reports errors before the first byte of a stream as ordinary HTTP errors', async () => {
    await expectOpenAiError(await postChat(setup.gateway, chatBody('error-429', { stream: true })), 429);
    await expectOpenAiError(await postChat(setup.gateway, chatBody('hang', { stream: true })), 504);
  });

  for (const scenario of ['midstream-reset', 'midstream-truncate', 'midstream-error']) {
    it(`${scenario}: an in-band error then [DONE], never a clean finish, logged as an error`, async () => {
      const response = await postChat(setup.gateway, chatBody(scenario, { stream: true }));
      expect(response.status).toBe(200);
      const events = await readSse(response);
      expect(events.at(-1)).toBe('[DONE]');
      const error = JSON.parse(events.at(-2) as string);
      expect(Object.keys(error.error).sort()).toEqual(['code', 'message', 'param', 'type']);
      const chunks = events.slice(0, -2).map((event) => JSON.parse(event));
      expect(chunks.some((chunk) => chunk.choices?.[0]?.finish_reason)).toBe(false);
      const [row] = await waitForLogRows(setup.gateway, [response.headers.get('x-request-id') as string]);
      expect(row?.outcome).toBe('error');
      expect(row?.status).toBeGreaterThanOrEqual(500);
    });
  }

  it('an unreachable upstream -> 502', async () => {
    const dead = await startMockUpstream();
    await dead.close();
    const other = await startTestGateway({
      mock: dead,
    });
    try {
      const response = await postChat(other, chatBody('mock'));
      expect((await expectOpenAiError(response, 502)).code).toBe('upstream_unreachable');
    } finally {
      await other.close();
    }
  });
});

/** Two copies of one request, pipelined on one HTTP/1.1 connection. */
function twice(path: string, payload: unknown, key: string): string {
  const body = JSON.stringify(payload);
  const request = `POST ${path} HTTP/1.1\r\nhost: gateway\r\nauthorization: Bearer ${key}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  return request + request;
}

/** The two log rows of a key's pipelined requests, once both are written. */
function bothRows(keyId: string) {
  return waitFor('both log rows', async () => {
    const found = await setup.gateway.gateway.database.db
      .selectFrom('request_log')
      .selectAll()
      .where('key_id', '=', keyId)
      .execute();
    return found.length === 2 && found;
  });
}

describe('client disconnects', () => {
  it('aborts the upstream request at once and logs the request as cancelled', async () => {
    const controller = new AbortController();
    const response = await postChat(setup.gateway, chatBody('slow-stream', { stream: true }));
    const requestId = response.headers.get('x-request-id') as string;
    const reader = response.body?.getReader();
    await reader?.read();
    await reader?.cancel();
    controller.abort();
    const upstream = setup.mock.requests.at(-1);
    await waitFor('the upstream request to be aborted', () => upstream?.aborted);
    const [row] = await waitForLogRows(setup.gateway, [requestId]);
    expect(row).toMatchObject({ outcome: 'cancelled', status: 499 });
  });
  it('cancels pipelined requests too, whose answers were still waiting for the connection', async () => {
    // Both are served at once; the second's answer waits for the first's, and Node never tells it the client left.
    const messagesBody = { model: 'held', max_tokens: 5, stream: true, messages: [{ role: 'user', content: 'hi' }] };
    const cases = [
      { path: '/v1/chat/completions', body: chatBody('held') },
      { path: '/v1/chat/completions', body: chatBody('held', { stream: true }) },
      // A stream of another surface whose answer waits for the connection.
      { path: '/v1/messages', body: messagesBody },
    ];
    for (const [index, { path, body: payload }] of cases.entries()) {
      const held = holdRequests(setup.mock, 'held');
      const { key, id } = await setup.gateway.newKey({ name: `pipelining-${index}` });
      const before = setup.mock.requests.length;
      const socket = connect(Number(new URL(setup.gateway.url).port), '127.0.0.1');
      socket.on('error', () => undefined);
      socket.write(twice(path, payload, key));
      await held.arrived(2);
      socket.destroy();
      await waitFor('both upstream requests to be aborted', () =>
        setup.mock.requests.slice(before).every((upstream) => upstream.aborted),
      );
      const rows = await bothRows(id);
      // The client's leaving, for both: not an interruption of the server's own (a stream's waiting answer).
      expect(
        rows.map((row) => [row.status, row.outcome, row.error_code]),
        path,
      ).toEqual([
        [499, 'cancelled', 'client_closed_request'],
        [499, 'cancelled', 'client_closed_request'],
      ]);
      held.releaseAll();
    }
  });
  it('logs pipelined streams that had started as the client leaving, not as an interruption of the server', async () => {
    for (const [path, payload] of [
      ['/v1/chat/completions', chatBody('slow-stream', { stream: true })],
      [
        '/v1/messages',
        { model: 'slow-stream', max_tokens: 50, stream: true, messages: [{ role: 'user', content: 'hi' }] },
      ],
    ] as const) {
      const { key, id } = await setup.gateway.newKey({ name: `pipelined-streams${path}` });
      const before = setup.mock.requests.length;
      const socket = connect(Number(new URL(setup.gateway.url).port), '127.0.0.1');
      socket.on('error', () => undefined);
      let received = '';
      socket.on('data', (data) => {
        received += data;
      });
      socket.write(twice(path, payload, key));
      // Both streams run at once: the first's events reach the client, the second's wait for the connection.
      await waitFor('both upstream streams', () => setup.mock.requests.length >= before + 2);
      await waitFor('a few events of the first stream', () => received.split('data:').length > 3);
      socket.destroy();
      const rows = await bothRows(id);
      expect(
        rows.map((row) => [row.status, row.error_code]),
        path,
      ).toEqual([
        [499, 'client_closed_request'],
        [499, 'client_closed_request'],
      ]);
    }
  });
  it('gives up on a client that stops taking the stream (a vanished peer): upstream aborted, logged as cancelled', async () => {
    // An upstream that never ends, in events large enough to fill every buffer between it and the client.
    const filler = 'x'.repeat(64 * 1024);
    setup.mock.on('flood', async (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      const chunk = { id: 'chatcmpl-flood', object: 'chat.completion.chunk', created: 1, model: 'flood' };
      while (!response.destroyed) {
        const event = `data: ${JSON.stringify({ ...chunk, choices: [{ index: 0, delta: { content: filler } }] })}\n\n`;
        if (!response.write(event))
          await new Promise((resolve) => response.once('drain', resolve).once('close', resolve));
      }
    });
    const { key, id } = await setup.gateway.newKey({ name: 'stops-reading' });
    const body = JSON.stringify(chatBody('flood', { stream: true }));
    const before = setup.mock.requests.length;
    // The client sends its request and never reads a byte, nor closes: its buffers fill and stay full.
    const socket = connect(Number(new URL(setup.gateway.url).port), '127.0.0.1');
    socket.on('error', () => undefined);
    socket.pause();
    socket.write(
      `POST /v1/chat/completions HTTP/1.1\r\nhost: gateway\r\nauthorization: Bearer ${key}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    try {
      const upstream = await waitFor('the request to reach the upstream', () => setup.mock.requests[before]);
      await waitFor('the upstream request to be aborted', () => upstream.aborted);
      const [row] = await waitFor('the log row', async () => {
        const rows = await setup.gateway.gateway.database.db
          .selectFrom('request_log')
          .selectAll()
          .where('key_id', '=', id)
          .execute();
        return rows.length > 0 && rows;
      });
      expect(row).toMatchObject({ status: 499, outcome: 'cancelled' });
    } finally {
      socket.destroy();
    }
  });
});
