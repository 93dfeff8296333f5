import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Cancellation } from '../../src/server/cancellation.js';
import { UpstreamClient, type UpstreamFailure } from '../../src/upstream/client.js';

/** The whole-response path of the one module doing outbound HTTP, against a real local server. */
let server: Server;
let origin: string;

beforeAll(async () => {
  server = createServer((request, response) => {
    if (request.url === '/big') {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('x'.repeat(10_000));
    } else if (request.url === '/slow') {
      setTimeout(() => response.end('late'), 2_000);
    } else if (request.url === '/error') {
      response.writeHead(429, { 'retry-after': '7', 'content-type': 'application/json' });
      response.end('{"error":{"message":"slow down"}}');
    } else {
      let body = '';
      request.on('data', (part) => {
        body += part;
      });
      request.on('end', () => {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ method: request.method, body }));
      });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const timeouts = { connectMs: 1_000, firstByteMs: 5_000, idleMs: 5_000 };
const post = (path: string, extra: object = {}) => ({
  origin,
  path,
  headers: { 'content-type': 'application/json' },
  body: '{"hello":"world"}',
  timeouts,
  maxConnections: 4,
  ...extra,
});

describe('upstream exchange (whole responses through undici dispatch)', () => {
  it('sends the body and reads the whole answer, status and headers included', async () => {
    const client = new UpstreamClient();
    const reply = await client.exchange(post('/echo'), (answer) => answer);
    expect(reply.statusCode).toBe(200);
    expect(reply.headers['content-type']).toBe('application/json');
    expect(JSON.parse(reply.body.toString())).toEqual({ method: 'POST', body: '{"hello":"world"}' });
    const error = await client.exchange(post('/error'), (answer) => answer);
    expect(error.statusCode).toBe(429);
    expect(error.headers['retry-after']).toBe('7');
    await client.close();
  });

  it('rejects with what read throws, and with fail(failure) when the connection fails', async () => {
    const client = new UpstreamClient();
    const refused = new Error('not what we wanted');
    await expect(
      client.exchange(post('/echo'), () => {
        throw refused;
      }),
    ).rejects.toBe(refused);
    const unreachable = await client
      .exchange(
        { ...post('/echo'), origin: 'http://127.0.0.1:1' },
        (answer) => answer,
        (failure) => failure.kind,
      )
      .catch((kind: unknown) => kind);
    expect(unreachable).toBe('unreachable');
    await client.close();
  });

  it('refuses a body larger than the gateway accepts', async () => {
    const client = new UpstreamClient({ maxResponseBytes: 1_024 });
    const failure = (await client
      .exchange(post('/big'), (answer) => answer)
      .catch((error: unknown) => error)) as UpstreamFailure;
    expect(failure.kind).toBe('too_large');
    expect(failure.message).toBe('a response larger than 1024 bytes');
    await client.close();
  });

  it('stops at once when the request is cancelled, and times out waiting for the first byte', async () => {
    const client = new UpstreamClient();
    const cancellation = new Cancellation();
    const started = Date.now();
    const pending = client.exchange(post('/slow', { signal: cancellation }), (answer) => answer);
    setTimeout(() => cancellation.abort('client_closed'), 100);
    expect(((await pending.catch((error: unknown) => error)) as UpstreamFailure).kind).toBe('aborted');
    expect(Date.now() - started).toBeLessThan(1_500);

    const impatient = { ...post('/slow'), timeouts: { ...timeouts, firstByteMs: 200 } };
    const timedOut = (await client
      .exchange(impatient, (answer) => answer)
      .catch((error: unknown) => error)) as UpstreamFailure;
    expect(timedOut.kind).toBe('first_byte_timeout');
    await client.close();
  });
});
