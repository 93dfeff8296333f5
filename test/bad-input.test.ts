import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { postChat, waitForLogRows } from './support/gateway.js';
import { useGatewayWithMock } from './support/gateway-fixture.js';
import { rawExchange } from './support/raw-http.js';

/**
 * Bad input, generated (fast-check) and from a fixed corpus: whatever arrives, the answer is a 2xx or a 4xx with
 * the OpenAI error body, never a 5xx, never a crash, never a hang.
 */

const setup = useGatewayWithMock({
  config: { limits: { max_body_size: '1mb' }, server: { v1_body_timeout: '1500ms' } },
});

afterAll(async () => {
  // Nothing reached the "unexpected error" path, and the server is still up.
  expect(setup.gateway.logLines.filter((line) => line.includes('unexpected error'))).toEqual([]);
  expect((await fetch(`${setup.gateway.url}/healthz`)).status).toBe(200);
});

async function expectNoServerError(response: Response): Promise<void> {
  const text = await response.text();
  expect(response.status, text).toBeLessThan(500);
  if (response.status >= 300) {
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    const body = JSON.parse(text);
    expect(Object.keys(body.error).sort()).toEqual(['code', 'message', 'param', 'type']);
  }
}

const models = fc.constantFrom('mock', 'gpt-4o-mini', 'no-such-model', '', 'x'.repeat(300));
const anyValue = fc.oneof(fc.jsonValue(), fc.constant(undefined));
const message = fc.oneof(
  fc.record(
    {
      role: fc.oneof(fc.constantFrom('system', 'developer', 'user', 'assistant', 'tool', 'function'), fc.string()),
      content: fc.oneof(
        fc.string(),
        fc.array(fc.record({ type: fc.constantFrom('text', 'image_url', 'refusal', 'x'), text: anyValue })),
        anyValue,
      ),
      tool_call_id: anyValue,
      tool_calls: anyValue,
      name: anyValue,
    },
    { requiredKeys: [] },
  ),
  fc.jsonValue(),
);
const chatRequest = fc.record(
  {
    model: fc.oneof(models, fc.jsonValue()),
    messages: fc.oneof(fc.array(message, { maxLength: 4 }), fc.jsonValue()),
    stream: fc.oneof(fc.boolean(), fc.jsonValue()),
    stream_options: anyValue,
    temperature: fc.oneof(fc.double(), fc.jsonValue()),
    top_p: anyValue,
    n: anyValue,
    max_tokens: fc.oneof(fc.integer({ min: -5, max: 50 }), fc.jsonValue()),
    stop: anyValue,
    tools: anyValue,
    tool_choice: anyValue,
    response_format: anyValue,
    logit_bias: anyValue,
    unknown_field: anyValue,
  },
  { requiredKeys: [] },
);

describe('generated bad input (property-based)', () => {
  it('arbitrary bytes as the body', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 2048 }), async (bytes) => {
        await expectNoServerError(await postChat(setup.gateway, Buffer.from(bytes).toString('latin1')));
      }),
      { numRuns: 150 },
    );
  });

  it('arbitrary JSON documents', async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue(), async (value) => {
        await expectNoServerError(await postChat(setup.gateway, JSON.stringify(value) ?? 'null'));
      }),
      { numRuns: 150 },
    );
  });

  it('requests with every field of the wrong shape, type or range', async () => {
    await fc.assert(
      fc.asyncProperty(chatRequest, async (request) => {
        await expectNoServerError(await postChat(setup.gateway, JSON.stringify(request)));
      }),
      { numRuns: 300 },
    );
  });

  it('arbitrary Authorization headers', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'grapheme-ascii', maxLength: 200 }), async (header) => {
        const value = header.replace(/[\r\n\0]/g, '').trim();
        const response = await fetch(`${setup.gateway.baseUrl}/models`, {
          headers: value ? { authorization: value } : {},
        });
        expect(response.status).toBe(401);
        await expectNoServerError(response);
      }),
      { numRuns: 150 },
    );
  });
});

function statusOf(raw: string): number {
  return Number(/^HTTP\/1\.[01] (\d{3})/.exec(raw)?.[1] ?? 0);
}

function expectJsonErrorResponse(raw: string, status: number): void {
  expect(statusOf(raw), raw.slice(0, 200)).toBe(status);
  expect(raw.toLowerCase()).toContain('content-type: application/json');
  const body = JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4));
  expect(Object.keys(body.error).sort()).toEqual(['code', 'message', 'param', 'type']);
}

describe('a fixed corpus of malformed HTTP and bodies', () => {
  const auth = () => `Authorization: Bearer ${setup.gateway.key}\r\n`;

  it('a header with a forbidden byte, and a garbage request line -> 400 with the OpenAI body', async () => {
    expectJsonErrorResponse(
      await rawExchange(setup.gateway.url, `GET /v1/models HTTP/1.1\r\nHost: x\r\nX-Bad: a\u0001b\r\n\r\n`),
      400,
    );
    expectJsonErrorResponse(await rawExchange(setup.gateway.url, 'THIS IS NOT HTTP\r\n\r\n'), 400);
  });

  it('oversized headers -> 431 with the OpenAI body', async () => {
    expectJsonErrorResponse(
      await rawExchange(
        setup.gateway.url,
        `GET /v1/models HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(100_000)}\r\n\r\n`,
      ),
      431,
    );
  });

  it('a malformed chunked body -> 400', async () => {
    const raw = await rawExchange(
      setup.gateway.url,
      `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n${auth()}Transfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\nZZZ\r\n{}\r\n0\r\n\r\n`,
    );
    expectJsonErrorResponse(raw, 400);
  });

  it('JSON nested more than 128 levels -> 400 invalid_value, not a stack overflow', async () => {
    const tooDeep = async (body: string) => {
      const response = await postChat(setup.gateway, body);
      const text = await response.text();
      expect(response.status, text).toBe(400);
      expect(JSON.parse(text).error).toMatchObject({
        code: 'invalid_value',
        type: 'invalid_request_error',
        message: 'The JSON body is nested more than 128 levels deep.',
      });
    };
    await tooDeep(`${'['.repeat(200_000)}${']'.repeat(200_000)}`);
    await tooDeep(`{"model":"mock","messages":${'['.repeat(100_000)}`);
    const nestedIn = (levels: number) =>
      `{"model":"mock","messages":[{"role":"user","content":"hi"}],"extra":${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}}`;
    await tooDeep(nestedIn(5000));
    // The body object is level 1: 128 levels in all still pass, one more does not.
    await tooDeep(nestedIn(128));
    const deepest = await postChat(setup.gateway, nestedIn(127));
    expect(deepest.status, await deepest.text()).toBe(200);
  });

  it('a NUL character in the model name is refused and still logged (PostgreSQL cannot store NUL)', async () => {
    const response = await postChat(
      setup.gateway,
      JSON.stringify({ model: 'bad\u0000model', messages: [{ role: 'user', content: 'x' }] }),
    );
    expect(response.status).toBe(404);
    await response.text();
    const [row] = await waitForLogRows(setup.gateway, [response.headers.get('x-request-id') as string]);
    expect(row?.model).toBe('bad\uFFFDmodel');
  });

  it('a body over the limit, declared or not -> 413', async () => {
    const response = await postChat(
      setup.gateway,
      `{"model":"mock","messages":[{"role":"user","content":"${'z'.repeat(1_200_000)}"}]}`,
    );
    expect(response.status).toBe(413);
    await expectNoServerError(response);
  });

  it('odd but legal forms are accepted: HTTP/1.0, no content type, unknown fields', async () => {
    const body = JSON.stringify({
      model: 'mock',
      messages: [{ role: 'user', content: 'hi' }],
      some_future_field: { x: 1 },
    });
    const raw = await rawExchange(
      setup.gateway.url,
      `POST /v1/chat/completions HTTP/1.0\r\nHost: x\r\n${auth()}Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    expect(statusOf(raw)).toBe(200);
    expect(setup.mock.requests.at(-1)?.body.some_future_field).toEqual({ x: 1 });
  });

  it('a body that never finishes is answered 408 by the server and the connection closed', async () => {
    // The client would wait far longer than the server's 1.5 s deadline: the answer must come from the server.
    const raw = await rawExchange(
      setup.gateway.url,
      `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n${auth()}Content-Length: 1000\r\n\r\n{"model":`,
      { timeoutMs: 20_000 },
    );
    expectJsonErrorResponse(raw, 408);
    expect(raw.toLowerCase()).toContain('connection: close');
    expect(JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4)).error.code).toBe('request_timeout');
    expect((await fetch(`${setup.gateway.url}/healthz`)).status).toBe(200);
  });
});
