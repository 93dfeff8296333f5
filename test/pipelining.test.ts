import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { chatBody, postChat } from './support/gateway.js';
import { useGatewayWithMock } from './support/gateway-fixture.js';
import { holdRequests } from './support/held-requests.js';
import { waitFor } from './support/wait.js';

const setup = useGatewayWithMock({ config: { server: { max_pipelined_requests: 3 } } });

/** `count` copies of one chat request, pipelined on one HTTP/1.1 connection. */
function pipelined(count: number, key: string): string {
  const body = JSON.stringify(chatBody('held'));
  const request = `POST /v1/chat/completions HTTP/1.1\r\nhost: gateway\r\nauthorization: Bearer ${key}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
  return request.repeat(count);
}

describe('requests pipelined on one connection', () => {
  it('are served at most max_pipelined_requests at once, the rest in turn, every answer in order', async () => {
    const held = holdRequests(setup.mock, 'held');
    const heldArrivals = () => setup.mock.requests.filter((request) => request.body.model === 'held').length;
    const socket = connect(Number(new URL(setup.gateway.url).port), '127.0.0.1');
    socket.on('error', () => undefined);
    let received = '';
    socket.on('data', (data) => {
      received += data;
    });
    socket.write(pipelined(10, setup.gateway.key));
    await held.arrived(3);
    // A request on another connection, sent later, goes through the gateway and the upstream and back: the seven
    // pipelined requests that wait would have reached the upstream by then had they been started with the first three.
    expect((await postChat(setup.gateway, chatBody('mock'))).status).toBe(200);
    expect(heldArrivals()).toBe(3);
    held.releaseAll();
    await waitFor('all ten answers', () => received.split('HTTP/1.1 ').length - 1 === 10);
    expect(received.match(/HTTP\/1\.1 \d+/g)).toEqual(Array(10).fill('HTTP/1.1 200'));
    expect(heldArrivals()).toBe(10);
    socket.destroy();
  });

  it('a connection that closes while requests wait unstarted: those never reach the upstream', async () => {
    const held = holdRequests(setup.mock, 'held');
    const before = setup.mock.requests.length;
    const socket = connect(Number(new URL(setup.gateway.url).port), '127.0.0.1');
    socket.on('error', () => undefined);
    socket.write(pipelined(6, setup.gateway.key));
    await held.arrived(3);
    socket.destroy();
    await waitFor('the three started to be aborted', () =>
      setup.mock.requests.slice(before).every((request) => request.aborted),
    );
    expect((await postChat(setup.gateway, chatBody('mock'))).status).toBe(200);
    expect(setup.mock.requests.slice(before).filter((request) => request.body.model === 'held')).toHaveLength(3);
    held.releaseAll();
  });
});
