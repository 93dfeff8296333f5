import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The HTTP skeleton shared by the mock upstreams: a real server on a free port that records every request (method,
 * path, headers, parsed body, whether the gateway hung up early) and hands it to a handler.
 */

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  // biome-ignore lint/suspicious/noExplicitAny: request bodies are arbitrary JSON that tests walk freely
  body: Record<string, any>;
  /** The body's bytes as received (pass-through tests compare them). */
  raw?: Buffer;
  /** Set when the gateway closed the connection before the response was complete. */
  aborted: boolean;
}

export type RequestHandler = (request: RecordedRequest, response: ServerResponse) => void | Promise<void>;

export interface MockServer {
  url: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

export async function startMockServer(handle: RequestHandler): Promise<MockServer> {
  const requests: RecordedRequest[] = [];
  const server: Server = createServer((incoming, response) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const raw = Buffer.concat(chunks);
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(raw.toString('utf8') || '{}');
      } catch {
        body = { unparseable: raw.toString('utf8') };
      }
      const recorded: RecordedRequest = {
        method: incoming.method ?? '',
        path: incoming.url ?? '',
        headers: incoming.headers,
        body,
        raw,
        aborted: false,
      };
      requests.push(recorded);
      response.on('close', () => {
        if (!response.writableFinished) recorded.aborted = true;
      });
      Promise.resolve(handle(recorded, response)).catch(() => response.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export function sendJson(
  response: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
) {
  const text = JSON.stringify(body);
  response.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  response.end(text);
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function splitIntoPieces(text: string, size = 6): string[] {
  return text.match(new RegExp(`.{1,${size}}`, 'gs')) ?? [];
}

/** The tool call every mock makes for model "tools", whatever the provider. */
export const weatherCall = { name: 'get_weather', arguments: { city: 'Paris', unit: 'celsius' } };
