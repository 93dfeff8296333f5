import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

type Handler = (request: IncomingMessage, response: ServerResponse) => void;

const served = Symbol('requests being served on this connection');
const waiting = Symbol('requests waiting for one of those to end');

interface CountedSocket extends Socket {
  [served]?: number;
  [waiting]?: Array<() => void>;
}

/**
 * Node serves every request pipelined on an HTTP/1.1 connection at once (their answers queue for the connection), so
 * one connection could start thousands of upstream calls, past `max_connections`. Here a connection serves at most
 * `max` at once; the next ones wait unstarted, in order, and the connection is not read meanwhile (backpressure on
 * the client). A client that does not pipeline never has more than one, and pays one counter and one listener.
 */
export function limitPipelinedRequests(max: number, serve: Handler): Handler {
  const start = (socket: CountedSocket, request: IncomingMessage, response: ServerResponse) => {
    socket[served] = (socket[served] ?? 0) + 1;
    // 'close' ends every response that had the connection; one still queued when the connection closed never
    // gets it, but then neither does anything after it on that connection.
    response.once('close', () => ended(socket));
    serve(request, response);
  };
  const ended = (socket: CountedSocket) => {
    socket[served] = (socket[served] ?? 1) - 1;
    const queue = socket[waiting];
    const next = queue?.shift();
    if (next) next();
    if (queue?.length === 0 && !socket.destroyed) socket.resume();
  };
  return (request, response) => {
    const socket = request.socket as CountedSocket;
    if ((socket[served] ?? 0) < max) {
      start(socket, request, response);
      return;
    }
    let queue = socket[waiting];
    if (!queue) {
      queue = [];
      socket[waiting] = queue;
    }
    queue.push(() => start(socket, request, response));
    socket.pause();
  };
}
