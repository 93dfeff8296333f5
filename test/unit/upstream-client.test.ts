import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Cancellation } from '../../src/server/cancellation.js';
import { fullCollection } from '../../src/server/reclaim-memory-when-idle.js';
import { bodyForgottenFromBytes, UpstreamClient, type UpstreamResponse } from '../../src/upstream/client.js';
import type { UpstreamFailure } from '../../src/upstream/failure.js';
import { streamHighWaterMark } from '../../src/upstream/streamed-response.js';
import { waitFor } from '../support/wait.js';

/** Both paths of the one module doing outbound HTTP (whole responses, streams), against a real local server. */
let server: Server;
let origin: string;
/** Responses of /hold: headers and a first part sent, the rest when the test ends them. */
const held: Array<{ end(text: string): void }> = [];
/** How many requests /slow has received (and will never answer). */
let slowArrivals = 0;
/** How many /held-events responses were closed before they ended (by the client going away). */
let heldEventsClosed = 0;
/** /flood: how far the upstream got, and the most body bytes the client held unread while it wrote. */
const floodEvents = 32_000;
const flood = {
  written: 0,
  finished: false,
  waitingForDrain: false,
  maxBuffered: 0,
  client: undefined as UpstreamResponse | undefined,
};

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
    } else if (request.url === '/events') {
      request.resume();
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      // Events split anywhere, a multi-byte character across two writes included, and a last one without its blank line.
      const bytes = Buffer.from('event: one\ndata: é1\n\ndata: 2\r\ndata: two\r\n\n: comment\n\ndata: 3');
      response.write(bytes.subarray(0, 14));
      response.write(bytes.subarray(14, 30), () => response.end(bytes.subarray(30)));
    } else if (request.url === '/held-events') {
      request.resume();
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write('data: first\n\n');
      response.on('close', () => {
        if (!response.writableFinished) heldEventsClosed++;
      });
    } else if (request.url === '/broken-events') {
      request.resume();
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write('data: first\n\n', () => response.socket?.destroy());
    } else if (request.url === '/flood') {
      // ~32 MB of events, more than loopback's socket buffers hold, each written when the client has taken the last.
      request.resume();
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      const filler = 'x'.repeat(1_000);
      const write = () => {
        while (flood.written < floodEvents) {
          const written = response.write(`data: ${flood.written} ${filler}\n\n`);
          flood.written++;
          flood.maxBuffered = Math.max(flood.maxBuffered, flood.client?.bufferedBytes ?? 0);
          if (!written) {
            flood.waitingForDrain = true;
            response.once('drain', () => {
              flood.waitingForDrain = false;
              write();
            });
            return;
          }
        }
        flood.finished = true;
        response.end();
      };
      write();
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
  pool: 'test',
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

describe('upstream stream (bodies read as they arrive, through undici dispatch)', () => {
  const eventsOf = async (response: UpstreamResponse) => {
    const events = [];
    for await (const event of response.events()) events.push(event);
    return events;
  };

  it('hands the body to the SSE parser as it arrives: events split anywhere, the last one at the end', async () => {
    const client = new UpstreamClient();
    const response = await client.stream(post('/events'));
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/event-stream');
    expect(await eventsOf(response)).toEqual([
      { event: 'one', data: 'é1' },
      { event: undefined, data: '2\ntwo' },
      { event: undefined, data: '3' },
    ]);
    await client.close();
  });

  it('reads a whole body as text, or only its first bytes, and refuses one over the limit', async () => {
    const client = new UpstreamClient({ maxResponseBytes: 1_024 });
    expect(await (await client.stream(post('/error'))).text()).toBe('{"error":{"message":"slow down"}}');
    expect(await (await client.stream(post('/big'))).text(100)).toBe('x'.repeat(100));
    const tooLarge = (await (
      await client.stream(post('/big'))
    )
      .text()
      .catch((error: unknown) => error)) as UpstreamFailure;
    expect(tooLarge.kind).toBe('too_large');
    await client.close();
  });

  it('pauses the upstream while the consumer is slow, holding at most about the high-water mark', async () => {
    const client = new UpstreamClient();
    const response = await client.stream(post('/flood'));
    flood.client = response;
    const events = response.events();
    expect((await events.next()).value?.data.startsWith('0 ')).toBe(true);
    // The consumer takes nothing more: the upstream comes to wait for its socket to drain, its body unfinished.
    await waitFor('the upstream to be held back', () => flood.waitingForDrain && response.bufferedBytes > 0);
    expect(flood.finished).toBe(false);
    expect(response.bufferedBytes).toBeLessThan(2 * streamHighWaterMark);
    let next = 1;
    let outOfOrder = 0;
    for await (const event of events) {
      if (!event.data.startsWith(`${next} `)) outOfOrder++;
      next++;
    }
    expect({ next, outOfOrder, finished: flood.finished }).toEqual({
      next: floodEvents,
      outOfOrder: 0,
      finished: true,
    });
    // A socket read (up to 64 KB) may land on top of a queue just under the mark, never more.
    expect(flood.maxBuffered).toBeLessThan(2 * streamHighWaterMark);
    await client.close();
  });

  it('closes the upstream connection when the request is cancelled mid-stream', async () => {
    const client = new UpstreamClient();
    const cancellation = new Cancellation();
    const response = await client.stream(post('/held-events', { signal: cancellation }));
    const events = response.events();
    expect((await events.next()).value).toEqual({ event: undefined, data: 'first' });
    const closedBefore = heldEventsClosed;
    const pending = events.next();
    cancellation.abort('client_closed');
    expect(((await pending.catch((error: unknown) => error)) as UpstreamFailure).kind).toBe('aborted');
    await waitFor('the upstream to see its connection closed', () => heldEventsClosed > closedBefore);
    await client.close();
  });

  it('closes the upstream connection when the consumer stops reading', async () => {
    const client = new UpstreamClient();
    const response = await client.stream(post('/held-events'));
    const closedBefore = heldEventsClosed;
    for await (const event of response.events()) {
      expect(event.data).toBe('first');
      break;
    }
    await waitFor('the upstream to see its connection closed', () => heldEventsClosed > closedBefore);
    await client.close();
  });

  it('fails with fail(failure) when the upstream breaks off or falls silent mid-stream', async () => {
    const client = new UpstreamClient();
    const broken = await client.stream(post('/broken-events'), (failure) => `mapped ${failure.kind}`);
    const events = broken.events();
    expect((await events.next()).value?.data).toBe('first');
    expect(await events.next().catch((error: unknown) => error)).toBe('mapped unreachable');
    expect(await events.next()).toEqual({ value: undefined, done: true });

    const silent = await client.stream({ ...post('/held-events'), timeouts: { ...timeouts, idleMs: 200 } });
    const silentEvents = silent.events();
    expect((await silentEvents.next()).value?.data).toBe('first');
    expect(((await silentEvents.next().catch((error: unknown) => error)) as UpstreamFailure).kind).toBe('idle_timeout');
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
      const streamed = await client.stream(post('/echo', { body }));
      expect(JSON.parse(await streamed.text()).body).toBe(text);
    }
    await client.close();
  });

  it('are let go of once written, while the response is still being read', async () => {
    const collect = fullCollection();
    if (!collect) throw new Error('no full collection available');
    const client = new UpstreamClient();
    const sent = await (async () => {
      const body = Buffer.from(text);
      return { reference: new WeakRef(body), response: await client.stream(post('/hold', { body })) };
    })();
    // A WeakRef holds its target until the current job ends: each probe collects in a later turn of the event loop.
    await waitFor('the request body to be collected', () => {
      collect();
      return sent.reference.deref() === undefined;
    });
    for (const response of held.splice(0)) response.end(' and the rest');
    expect(await sent.response.text()).toBe('first part and the rest');
    await client.close();
  });
});
