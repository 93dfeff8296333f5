import type { ServerResponse } from 'node:http';
import { type RecordedRequest, startMockServer } from './mock-server.js';

/**
 * An upstream that answers with exactly the responses a test scripts, in the provider's real wire format, and records
 * what it received: the "upstream wire exchange" of a golden transcript. A scripted stream is written event by event
 * (`event:` line when given, `data:` JSON, the provider's line ending, or raw bytes) and then ends cleanly, is cut
 * (socket reset), or simply stops; a whole body can be cut short or sent without its length.
 */

export type ScriptedEvent =
  | {
      event?: string;
      /** JSON value (serialized on one line) or raw text. */
      data: unknown;
    }
  /** Bytes written as they are, e.g. half an event, a line without its blank line. */
  | { raw: string };

export interface ScriptedResponse {
  status: number;
  headers?: Record<string, string>;
  /** A JSON body. */
  json?: unknown;
  /** A raw body. */
  text?: string;
  /** An event stream. */
  sse?: ScriptedEvent[];
  /** How an event stream ends: `end` (default) closes it cleanly, `reset` destroys the connection. */
  end?: 'end' | 'reset';
  /** Line ending of the event stream (Gemini uses CRLF). */
  lineEnding?: string;
  /** A JSON or raw body that ends early: its full length is announced, only this many bytes are sent, then a reset. */
  cutAt?: number;
  /** A JSON or raw body sent without a content-length (chunked), as some proxies do. */
  noContentLength?: boolean;
}

export interface ScriptedUpstream {
  url: string;
  requests: RecordedRequest[];
  /** Responses for the next requests, in order; when they run out, the last one is repeated. */
  script(responses: ScriptedResponse[]): void;
  close(): Promise<void>;
}

function write(response: ServerResponse, scripted: ScriptedResponse): void {
  if (scripted.sse) {
    const eol = scripted.lineEnding ?? '\n';
    response.writeHead(scripted.status, { 'content-type': 'text/event-stream', ...scripted.headers });
    for (const event of scripted.sse) {
      if ('raw' in event) {
        response.write(event.raw);
        continue;
      }
      const data = typeof event.data === 'string' ? event.data : JSON.stringify(event.data);
      response.write(`${event.event === undefined ? '' : `event: ${event.event}${eol}`}data: ${data}${eol}${eol}`);
    }
    if (scripted.end === 'reset') {
      // Let the events reach the gateway before the connection dies.
      setTimeout(() => response.socket?.destroy(), 20);
      return;
    }
    response.end();
    return;
  }
  const body = scripted.json === undefined ? (scripted.text ?? '') : JSON.stringify(scripted.json);
  response.writeHead(scripted.status, {
    'content-type': scripted.json === undefined ? 'text/plain' : 'application/json',
    ...(scripted.noContentLength ? {} : { 'content-length': Buffer.byteLength(body) }),
    ...scripted.headers,
  });
  if (scripted.cutAt !== undefined) {
    // Always short of the whole body, and the connection dies at once: a complete answer would let the socket be
    // reused for the next request before a delayed reset.
    const bytes = Buffer.from(body);
    response.write(bytes.subarray(0, Math.min(scripted.cutAt, Math.max(0, bytes.length - 1))), () =>
      response.socket?.destroy(),
    );
    return;
  }
  response.end(body);
}

export async function startScriptedUpstream(): Promise<ScriptedUpstream> {
  let queue: ScriptedResponse[] = [];
  let last: ScriptedResponse | undefined;
  const server = await startMockServer((_request, response) => {
    const next = queue.shift() ?? last;
    if (!next) {
      response.writeHead(500, { 'content-type': 'text/plain' });
      response.end('nothing scripted');
      return;
    }
    last = next;
    write(response, next);
  });
  return {
    url: server.url,
    requests: server.requests,
    script(responses) {
      queue = [...responses];
      last = undefined;
    },
    close: server.close,
  };
}
