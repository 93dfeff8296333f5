import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from './support/gateway.js';
import { type MockUpstream, startMockUpstream } from './support/mock-openai-upstream.js';

/**
 * HEAD is GET without the body (RFC 9110 §9.3.2) on every route that answers GET: same status and headers, the same
 * authentication. A real 405 lists HEAD in `Allow` beside GET. Sent with node:http, which reads a HEAD answer as one
 * without a body, so the test also sees whether any body bytes were sent: they would corrupt the next response on
 * the connection, which it reuses.
 */

interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function send(url: string, method: string, headers: Record<string, string> = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const outgoing = request(url, { method, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        }),
      );
      response.on('error', reject);
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
}

/** Headers that differ between any two responses, whatever their method. */
const perResponse = new Set(['date', 'x-request-id', 'connection', 'keep-alive']);
const comparable = (headers: RawResponse['headers']) =>
  Object.fromEntries(Object.entries(headers).filter(([name]) => !perResponse.has(name)));

let mock: MockUpstream;
let gateway: TestGateway;
beforeAll(async () => {
  mock = await startMockUpstream();
  gateway = await startTestGateway({ mock });
});
afterAll(async () => {
  await gateway?.close();
  await mock?.close();
});

describe('HEAD', () => {
  it('answers like GET without a body on the data plane, with a key', async () => {
    const authorization = { authorization: `Bearer ${gateway.key}` };
    for (const path of ['/v1/models', '/v1/models/mock']) {
      const get = await send(`${gateway.url}${path}`, 'GET', authorization);
      const head = await send(`${gateway.url}${path}`, 'HEAD', authorization);
      expect([path, head.status]).toEqual([path, 200]);
      expect(head.body).toBe('');
      expect(comparable(head.headers)).toEqual(comparable(get.headers));
      expect(head.headers['x-request-id']).toBeTruthy();
    }
  });

  it('requires a key as GET does: 401 without a body', async () => {
    const get = await send(`${gateway.url}/v1/models`, 'GET');
    const head = await send(`${gateway.url}/v1/models`, 'HEAD');
    expect([get.status, head.status]).toEqual([401, 401]);
    expect(head.body).toBe('');
    expect(head.headers['content-type']).toBe(get.headers['content-type']);
  });

  it('answers like GET without a body on the probes, the management API and the console', async () => {
    for (const path of ['/healthz', '/readyz', '/metrics', '/console/', '/api/openapi.json', '/api/session']) {
      const get = await send(`${gateway.url}${path}`, 'GET');
      const head = await send(`${gateway.url}${path}`, 'HEAD');
      expect([path, head.status]).toEqual([path, get.status]);
      expect(head.body).toBe('');
      expect(head.headers['content-type']).toBe(get.headers['content-type']);
    }
  });

  it('is refused with 405 on a POST-only route, whose Allow does not offer it', async () => {
    const head = await send(`${gateway.url}/v1/chat/completions`, 'HEAD', {
      authorization: `Bearer ${gateway.key}`,
    });
    expect(head.status).toBe(405);
    expect(head.body).toBe('');
    expect(head.headers.allow).toBe('POST');
  });

  it('is listed in Allow beside GET when another method is refused', async () => {
    const put = await send(`${gateway.url}/v1/models`, 'PUT', { authorization: `Bearer ${gateway.key}` });
    expect(put.status).toBe(405);
    expect(put.headers.allow).toBe('GET, HEAD');
    const post = await send(`${gateway.url}/v1/responses/resp_123`, 'POST', {
      authorization: `Bearer ${gateway.key}`,
    });
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD, DELETE');
  });
});
