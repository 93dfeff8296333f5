import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Cancellation } from '../../src/server/cancellation.js';
import { fullCollection } from '../../src/server/reclaim-memory-when-idle.js';
import { bodyForgottenFromBytes, UpstreamClient, type UpstreamFailure } from '../../src/upstream/client.js';
import { waitFor } from '../support/wait.js';

/** The whole-response path of the one module doing outbound HTTP, against a real local server. */
let server: Server;
let origin: string;
/** Responses of /hold: headers and a first part sent, the rest when the test ends them. */
const held: Array<{ end(text: string): void }> = [];
/** How many requests /slow has received (and will never answer). */
let slowArrivals = 0;

beforeAll(async () => {
  server = createServer((request, response) => {
    if (request.url === '/big') {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('x'.repeat(10_000));
    } else if (request.url === '/hold') {
      request.resume();
      request.on('end', () => {
        response.writeHead(200, { 'content-type': 'text/plain' });
        response.write('first part');
        held.push(response);
      });
    } else if (request.url === '/slow') {
      // Never answers: only a cancellation or a timeout of the client can end the exchange.
      slowArrivals++;
      request.resume();
    } else if (request.url === '/error') {
      response.writeHead(429, { 'retry-after': '7', 'content-type': 'application/json' });
      response.end('{"error":{"message":"slow down"}}');
    } else {
      const parts: Buffer[] = [];
      request.on('data', (part: Buffer) => parts.push(part));
      request.on('end', () => {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ method: request.method, body: Buffer.concat(parts).toString() }));
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
    const before = slowArrivals;
    const pending = client.exchange(post('/slow', { signal: cancellation }), (answer) => answer);
    await waitFor('the request to reach the upstream', () => slowArrivals > before);
    cancellation.abort('client_closed');
    // The upstream never answers and the first-byte timeout is 5 s: settling as 'aborted' is the cancellation's doing.
    expect(((await pending.catch((error: unknown) => error)) as UpstreamFailure).kind).toBe('aborted');

    const impatient = { ...post('/slow'), timeouts: { ...timeouts, firstByteMs: 200 } };
    const timedOut = (await client
      .exchange(impatient, (answer) => answer)
      .catch((error: unknown) => error)) as UpstreamFailure;
    expect(timedOut.kind).toBe('first_byte_timeout');
    await client.close();
  });
});

describe('large request bodies (given to undici as an iterable it does not keep)', () => {
  const text = JSON.stringify({ content: 'é—x'.repeat(20_000) });

  it('arrive whole, multi-byte characters and length included, as a string or as bytes', async () => {
    expect(Buffer.byteLength(text)).toBeGreaterThan(bodyForgottenFromBytes);
    const client = new UpstreamClient();
    for (const body of [text, Buffer.from(text)]) {
      const reply = await client.exchange(post('/echo', { body }), (answer) => answer);
      expect(JSON.parse(reply.body.toString()).body).toBe(text);
      const streamed = await client.send(post('/echo', { body }));
      expect(JSON.parse(await streamed.body.text()).body).toBe(text);
    }
    await client.close();
  });

  it('are let go of once written, while the response is still being read', async () => {
    const collect = fullCollection();
    if (!collect) throw new Error('no full collection available');
    const client = new UpstreamClient();
    const sent = await (async () => {
      const body = Buffer.from(text);
      return { reference: new WeakRef(body), response: await client.send(post('/hold', { body })) };
    })();
    // A WeakRef holds its target until the current job ends; collect from later turns of the event loop.
    for (let round = 0; round < 3 && sent.reference.deref() !== undefined; round++) {
      await sleep(20);
      collect();
    }
    expect(sent.reference.deref()).toBeUndefined();
    for (const response of held.splice(0)) response.end(' and the rest');
    expect(await sent.response.body.text()).toBe('first part and the rest');
    await client.close();
  });
});
