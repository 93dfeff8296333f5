import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { postRaw, readAnswer } from './support/bad-input-oracle.js';
import { badInputGateway, type EndpointCase, endpointCases, bodyLimit as limit } from './support/bad-input-requests.js';
import { waitForLogRows } from './support/gateway.js';
import { useGatewayWithMock } from './support/gateway-fixture.js';
import { parseRaw, rawExchange } from './support/raw-http.js';

/**
 * Bad input at the HTTP level, on every data-plane endpoint: a chunked body cut short or malformed, a body that stops
 * arriving, bodies at and just over the size limit, compressed bodies that are not what their coding says, content
 * types. Each is answered by the endpoint in its surface's shape, under the request's own id, and logged with the
 * status the client saw. (Generated cases: bad-input.http.generated.test.ts.)
 */

const setup = useGatewayWithMock(badInputGateway);

afterAll(async () => {
  expect(setup.gateway.logLines.filter((line) => line.includes('unexpected error'))).toEqual([]);
  expect((await fetch(`${setup.gateway.url}/healthz`)).status).toBe(200);
});

function upstreamCalls(): number {
  return [setup.mock, setup.providerMocks.anthropic, setup.providerMocks.gemini].reduce(
    (sum, mock) => sum + mock.requests.length,
    0,
  );
}

describe('content encodings', () => {
  it('decodes a gzip, deflate or br body and sends the upstream the document, not the coding', async () => {
    const messages = endpointCases[2] as EndpointCase;
    const plain = Buffer.from(JSON.stringify(messages.body));
    for (const [encoding, body] of [
      ['gzip', gzipSync(plain)],
      ['deflate', deflateSync(plain)],
      ['br', brotliCompressSync(plain)],
    ] as const) {
      const answer = await readAnswer(
        await postRaw(setup.gateway, messages.path, body, { 'content-encoding': encoding }),
        'anthropic',
        encoding,
      );
      expect(answer.status, answer.text).toBe(200);
      const sent = setup.providerMocks.anthropic.requests.at(-1);
      expect(sent?.headers['content-encoding']).toBeUndefined();
      expect(sent?.body.messages).toEqual(messages.body.messages);
    }
  });

  it('refuses a body whose content is not what its coding says, and a coding that grows past the size limit', async () => {
    const chat = endpointCases[0] as EndpointCase;
    const plain = Buffer.from(JSON.stringify(chat.body));
    const send = (body: Buffer, encoding: string) =>
      postRaw(setup.gateway, chat.path, body, { 'content-encoding': encoding });
    for (const [body, encoding] of [
      [plain, 'gzip'],
      [gzipSync(plain).subarray(0, 20), 'gzip'],
      [plain, 'br'],
      [deflateSync(plain), 'gzip'],
    ] as const) {
      const answer = await readAnswer(await send(body, encoding), 'openai', `${encoding} ${body.length}`);
      expect([answer.status, answer.error.code, answer.error.message]).toEqual([
        400,
        'invalid_encoding',
        `The request body is not valid ${encoding} data (Content-Encoding: ${encoding}).`,
      ]);
    }
    // A small upload that would inflate past the limit is stopped there, not inflated whole.
    const bomb = gzipSync(Buffer.from(`{"model":"gpt-4o-mini","messages":[],"pad":"${' '.repeat(limit * 64)}"}`));
    expect(bomb.length).toBeLessThan(limit);
    const tooLarge = await readAnswer(await send(bomb, 'gzip'), 'openai', 'gzip bomb');
    expect([tooLarge.status, tooLarge.error.code]).toEqual([413, 'request_too_large']);
    // The anthropic surface says the same in its shape.
    const messages = endpointCases[2] as EndpointCase;
    const refused = await readAnswer(
      await postRaw(setup.gateway, messages.path, Buffer.from(JSON.stringify(messages.body)), {
        'content-encoding': 'snappy',
      }),
      'anthropic',
      'snappy on /v1/messages',
    );
    expect([refused.status, refused.error.type]).toEqual([415, 'invalid_request_error']);
  });
});

describe('content types', () => {
  it('takes JSON sent with another or no content type (curl -d sends form encoding), and refuses other charsets', async () => {
    const chat = endpointCases[0] as EndpointCase;
    const plain = JSON.stringify(chat.body);
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=us-ascii']) {
      const answer = await readAnswer(
        await postRaw(setup.gateway, chat.path, plain, { 'content-type': type }),
        'openai',
        type,
      );
      expect(answer.status, type).toBe(200);
    }
    const utf16 = Buffer.from(`\ufeff${plain}`, 'utf16le');
    const refused = await readAnswer(
      await postRaw(setup.gateway, chat.path, utf16, { 'content-type': 'application/json; charset=utf-16' }),
      'openai',
      'utf-16',
    );
    expect([refused.status, refused.error.code]).toEqual([415, 'unsupported_media_type']);
    expect(refused.error.message).toContain('utf-16');
  });

  it('says what the body was sent as when it is not JSON', async () => {
    const chat = endpointCases[0] as EndpointCase;
    const form = await readAnswer(
      await postRaw(setup.gateway, chat.path, 'model=gpt-4o-mini&messages=hi', {
        'content-type': 'application/x-www-form-urlencoded',
      }),
      'openai',
      'form',
    );
    expect(form.status).toBe(400);
    expect(form.error.message).toContain('application/x-www-form-urlencoded');
  });
});

describe('bodies cut short and at the size limit', () => {
  const auth = () => `Authorization: Bearer ${setup.gateway.key}\r\nanthropic-version: 2023-06-01\r\n`;

  it.each(endpointCases)(
    'a chunked body cut short on $path is a 400 in the surface’s shape, logged as the client leaving',
    async (endpoint) => {
      const before = upstreamCalls();
      const body = JSON.stringify(endpoint.body);
      const chunk = body.slice(0, 20);
      const raw = await rawExchange(
        setup.gateway.url,
        `POST ${endpoint.path} HTTP/1.1\r\nHost: x\r\n${auth()}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n` +
          `${chunk.length.toString(16)}\r\n${chunk}\r\n`,
        { halfClose: true },
      );
      const answer = parseRaw(raw);
      expect(answer.status, raw.slice(0, 300)).toBe(400);
      const error = JSON.parse(answer.body);
      if (endpoint.surface === 'openai') expect(error.error.message).toBe('The request body was incomplete.');
      else expect(error, raw).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
      expect(upstreamCalls()).toBe(before);
      // The connection ended mid-body: whether the client closed it or only its side cannot be told, so it left.
      const [row] = await waitForLogRows(setup.gateway, [answer.headers['x-request-id'] as string]);
      expect([row?.status, row?.outcome]).toEqual([499, 'cancelled']);
    },
  );

  it.each(endpointCases)(
    'malformed chunks on $path are a 400 in the surface’s shape under the request’s own id, logged as such',
    async (endpoint) => {
      const raw = await rawExchange(
        setup.gateway.url,
        `POST ${endpoint.path} HTTP/1.1\r\nHost: x\r\n${auth()}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n` +
          '2\r\n{"\r\nZZZ\r\n}\r\n0\r\n\r\n',
      );
      const answer = parseRaw(raw);
      expect([answer.status, answer.headers.connection], raw.slice(0, 300)).toEqual([400, 'close']);
      const error = JSON.parse(answer.body);
      if (endpoint.surface === 'openai') {
        expect(error.error).toMatchObject({ code: 'malformed_request', type: 'invalid_request_error' });
      } else {
        expect(error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
        expect(error.error.message).toContain('malformed');
      }
      const [row] = await waitForLogRows(setup.gateway, [answer.headers['x-request-id'] as string]);
      expect([row?.status, row?.error_code]).toEqual([400, 'malformed_request']);
    },
  );

  // Concurrent: each case waits out the body deadline (server.v1_body_timeout) on a connection of its own.
  it.concurrent.for(endpointCases)(
    'a body that stops arriving on $path is a 408 in the surface’s shape, logged as such',
    async (endpoint, { expect }) => {
      const raw = await rawExchange(
        setup.gateway.url,
        `POST ${endpoint.path} HTTP/1.1\r\nHost: x\r\n${auth()}Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n` +
          '{"model":',
      );
      const answer = parseRaw(raw);
      const error = JSON.parse(answer.body);
      if (endpoint.surface === 'openai') {
        expect([answer.status, error.error.code], raw.slice(0, 300)).toEqual([408, 'request_timeout']);
      } else {
        expect([answer.status, error.type, error.error.type], raw.slice(0, 300)).toEqual([
          408,
          'error',
          'timeout_error',
        ]);
      }
      expect(answer.headers.connection).toBe('close');
      const [row] = await waitForLogRows(setup.gateway, [answer.headers['x-request-id'] as string]);
      expect([row?.status, row?.error_code]).toEqual([408, 'request_timeout']);
    },
  );

  it.each(endpointCases)(
    'a body of exactly the limit is served on $path, one byte more is a 413 (declared or chunked)',
    async (endpoint) => {
      const document = JSON.stringify(endpoint.body);
      const atLimit = `${document.slice(0, -1)}${' '.repeat(limit - Buffer.byteLength(document))}}`;
      expect(Buffer.byteLength(atLimit)).toBe(limit);
      const served = await readAnswer(
        await postRaw(setup.gateway, endpoint.path, atLimit),
        endpoint.surface,
        'at limit',
      );
      expect(served.status).toBe(200);
      const overLimit = `${atLimit.slice(0, -1)} }`;
      const declared = await readAnswer(
        await postRaw(setup.gateway, endpoint.path, overLimit),
        endpoint.surface,
        'limit + 1',
      );
      expect(declared.status).toBe(413);
      const raw = await rawExchange(
        setup.gateway.url,
        `POST ${endpoint.path} HTTP/1.1\r\nHost: x\r\n${auth()}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n` +
          `${Buffer.byteLength(overLimit).toString(16)}\r\n${overLimit}\r\n0\r\n\r\n`,
      );
      const chunked = parseRaw(raw);
      expect(chunked.status, raw.slice(0, 200)).toBe(413);
      expect(chunked.headers.connection).toBe('close');
      const [row] = await waitForLogRows(setup.gateway, [chunked.headers['x-request-id'] as string]);
      expect(row?.status).toBe(413);
    },
  );
});
