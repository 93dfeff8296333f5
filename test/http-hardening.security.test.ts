import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiRequest } from './support/console.js';
import { jsonOf, startTestGateway, type TestGateway } from './support/gateway.js';
import { type MockUpstream, startMockUpstream } from './support/mock-openai-upstream.js';
import { waitFor } from './support/wait.js';

/**
 * What a client can do to the server before it is even authenticated: trickle a request body, open connections
 * without end, scrape /metrics; and what the browser-facing responses say about themselves (nosniff, HSTS). Slow
 * clients are real sockets writing a few bytes and then nothing.
 */

let mock: MockUpstream;
/** Short body deadlines, a metrics token, and a trusted proxy. */
let strict: TestGateway;
/** Defaults, except /metrics on a port of its own. */
let separateMetrics: TestGateway;

const metricsToken = 'metrics-token-0123456789abcdef';

beforeAll(async () => {
  mock = await startMockUpstream();
  strict = await startTestGateway({
    mock,
    config: {
      server: { api_body_timeout: '2s', v1_body_timeout: '3s' },
      metrics: { bearer_token: metricsToken },
      console: { trust_proxy: true },
    },
  });
  separateMetrics = await startTestGateway({ mock, config: { metrics: { port: 0 } } });
});

afterAll(async () => {
  await strict?.close();
  await separateMetrics?.close();
  await mock?.close();
});

interface SocketOutcome {
  response: string;
  closed: boolean;
}

/**
 * Sends `head` and the first part of a body, then nothing; resolves with what came back once the server closed the
 * connection (or after `waitMs`, to fail a stuck test rather than hang).
 */
function trickle(gateway: TestGateway, head: string, firstBytes: string, waitMs = 20_000): Promise<SocketOutcome> {
  const url = new URL(gateway.url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(url.port), url.hostname);
    let response = '';
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ response, closed: false });
    }, waitMs);
    socket.on('connect', () => socket.write(head + firstBytes));
    socket.on('data', (chunk) => {
      response += chunk.toString();
    });
    socket.on('error', reject);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ response, closed: true });
    });
  });
}

function postHead(path: string, length: number, extra: string[] = []): string {
  return [
    `POST ${path} HTTP/1.1`,
    'Host: localhost',
    'Content-Type: application/json',
    `Content-Length: ${length}`,
    ...extra,
    '',
    '',
  ].join('\r\n');
}

function errorOf(response: string) {
  const body = response.slice(response.indexOf('\r\n\r\n') + 4);
  return JSON.parse(body).error as { code: string; type: string; message: string };
}

describe('slow request bodies', () => {
  it('answers 408 and closes the connection when a body to /api stops arriving', async () => {
    const outcome = await trickle(strict, postHead('/api/session', 200), '{"email":"a@b.test","pass');
    expect(outcome.closed).toBe(true);
    expect(outcome.response).toMatch(/^HTTP\/1\.1 408 /);
    expect(outcome.response.toLowerCase()).toContain('connection: close');
    expect(outcome.response.toLowerCase()).toContain('x-request-id: req_');
    expect(errorOf(outcome.response)).toMatchObject({ code: 'request_timeout', type: 'invalid_request_error' });
  });

  it('answers 408 and closes the connection when a body to /v1 stops arriving, authenticated or not', async () => {
    // Both connections at once: each waits out the deadline on its own.
    const [authenticated, anonymous] = await Promise.all([
      trickle(
        strict,
        postHead('/v1/chat/completions', 500, [`Authorization: Bearer ${strict.key}`]),
        '{"model":"mock","messages":[{"role":"user","content":"hel',
      ),
      trickle(strict, postHead('/v1/chat/completions', 500), '{"model":"mo'),
    ]);
    expect(authenticated.closed).toBe(true);
    expect(authenticated.response).toMatch(/^HTTP\/1\.1 408 /);
    expect(errorOf(authenticated.response).code).toBe('request_timeout');
    // Without a key the 401 goes out at once, and the connection still does not outlive the deadline.
    expect(anonymous.closed).toBe(true);
    expect(anonymous.response).toMatch(/^HTTP\/1\.1 401 /);
  });

  it('serves a body that arrives in pieces within the deadline', async () => {
    const url = new URL(strict.url);
    const body = JSON.stringify({ email: 'nobody@x.test', password: 'not a password at all' });
    const response = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(Number(url.port), url.hostname);
      let received = '';
      socket.on('connect', async () => {
        socket.write(postHead('/api/session', Buffer.byteLength(body), ['Connection: close']));
        for (const piece of [body.slice(0, 10), body.slice(10, 30), body.slice(30)]) {
          await new Promise((resume) => setTimeout(resume, 50));
          socket.write(piece);
        }
      });
      socket.on('data', (chunk) => {
        received += chunk.toString();
      });
      socket.on('error', reject);
      socket.on('close', () => resolve(received));
    });
    expect(response).toMatch(/^HTTP\/1\.1 401 /);
    expect(errorOf(response).code).toBe('invalid_credentials');
  });
});

describe('the connection cap', () => {
  it('closes connections beyond server.max_connections at once, and counts them', async () => {
    const capped = await startTestGateway({ mock, config: { server: { max_connections: 2 } } });
    const url = new URL(capped.url);
    const open = (): Promise<net.Socket> =>
      new Promise((resolve, reject) => {
        const socket = net.connect(Number(url.port), url.hostname, () => resolve(socket));
        socket.on('error', reject);
      });
    try {
      const held = [await open(), await open()];
      // Both answered: the server has accepted them (kept open for more requests) before the third arrives.
      await Promise.all(
        held.map(
          (socket) =>
            new Promise((resolve) => {
              socket.once('data', resolve);
              socket.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n');
            }),
        ),
      );
      const third = await open();
      const outcome = await new Promise<string>((resolve) => {
        let received = '';
        third.on('data', (chunk) => {
          received += chunk.toString();
        });
        third.on('close', () => resolve(received));
        third.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n');
      });
      expect(outcome).toBe('');
      for (const socket of held) socket.destroy();
      // A scrape is dropped too until the server has seen the held connections close.
      const metrics = await waitFor('a scrape once the held connections closed', async () =>
        (await fetch(`${capped.url}/metrics`)).text(),
      );
      expect(metrics).toMatch(/^switchboard_connections_dropped_total [1-9]/m);
    } finally {
      await capped.close();
    }
  });
});

describe('/metrics', () => {
  it('requires the bearer token when one is configured', async () => {
    const anonymous = await fetch(`${strict.url}/metrics`);
    expect(anonymous.status).toBe(401);
    expect((await jsonOf(anonymous)).error.code).toBe('invalid_metrics_token');
    const wrong = await fetch(`${strict.url}/metrics`, { headers: { authorization: 'Bearer not-the-token-at-all' } });
    expect(wrong.status).toBe(401);
    const scraped = await fetch(`${strict.url}/metrics`, { headers: { authorization: `Bearer ${metricsToken}` } });
    expect(scraped.status).toBe(200);
    expect(await scraped.text()).toContain('switchboard_requests_total');
  });

  it('is served only on its own port when metrics.port is set', async () => {
    const metricsUrl = separateMetrics.gateway.metricsUrl;
    expect(metricsUrl).toBeDefined();
    expect((await fetch(`${separateMetrics.url}/metrics`)).status).toBe(404);
    const scraped = await fetch(`${metricsUrl}/metrics`);
    expect(scraped.status).toBe(200);
    expect(scraped.headers.get('content-type')).toContain('text/plain');
    expect(await scraped.text()).toContain('switchboard_requests_total');
    // Nothing else is reachable there.
    for (const path of ['/v1/models', '/api/session', '/healthz']) {
      expect((await fetch(`${metricsUrl}${path}`)).status, path).toBe(404);
    }
  });
});

describe('response headers of the console and /api', () => {
  it('sends nosniff on /api and console responses, errors included', async () => {
    for (const path of ['/api/session', '/api/no-such-route', '/console/', '/healthz']) {
      const response = await fetch(`${separateMetrics.url}${path}`);
      expect(response.headers.get('x-content-type-options'), path).toBe('nosniff');
      expect(response.headers.get('strict-transport-security'), path).toBeNull();
    }
    const signIn = await apiRequest(separateMetrics.url, 'POST', '/api/session', {
      body: { email: 'nobody@x.test', password: 'whatever it is' },
    });
    expect(signIn.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('sends HSTS when the request came over TLS per a trusted proxy, and only then', async () => {
    const overTls = await fetch(`${strict.url}/api/session`, { headers: { 'x-forwarded-proto': 'https' } });
    expect(overTls.headers.get('strict-transport-security')).toBe('max-age=31536000');
    const plain = await fetch(`${strict.url}/api/session`, { headers: { 'x-forwarded-proto': 'http' } });
    expect(plain.headers.get('strict-transport-security')).toBeNull();
    // Without console.trust_proxy, anyone can send the header: it is ignored.
    const untrusted = await fetch(`${separateMetrics.url}/api/session`, { headers: { 'x-forwarded-proto': 'https' } });
    expect(untrusted.headers.get('strict-transport-security')).toBeNull();
  });
});
