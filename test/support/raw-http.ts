import { connect } from 'node:net';

/**
 * HTTP spoken by hand, for requests no client library sends (a chunked body cut short, malformed chunks, a body that
 * stops arriving): the bytes go out on a fresh connection, and what came back before the server closed it is read.
 */

/** Sends raw bytes to `url`'s host, half-closes when told, and returns what came back before the server closed. */
export function rawExchange(
  url: string,
  bytes: Buffer | string,
  options: { halfClose?: boolean; timeoutMs?: number } = {},
): Promise<string> {
  return new Promise((resolve) => {
    const target = new URL(url);
    const socket = connect(Number(target.port), target.hostname);
    let received = '';
    const finish = () => {
      socket.destroy();
      resolve(received);
    };
    socket.on('data', (chunk) => {
      received += chunk.toString('latin1');
    });
    socket.on('end', finish);
    socket.on('error', finish);
    socket.setTimeout(options.timeoutMs ?? 10_000, finish);
    socket.write(bytes);
    if (options.halfClose) socket.end();
  });
}

/** A raw HTTP/1.1 answer: its status, headers (lower-case names) and body (chunked framing removed). */
export function parseRaw(raw: string): { status: number; headers: Record<string, string>; body: string } {
  const [head = '', ...rest] = raw.split('\r\n\r\n');
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  let body = rest.join('\r\n\r\n');
  if (headers['transfer-encoding'] === 'chunked') {
    let decoded = '';
    let at = 0;
    while (at < body.length) {
      const end = body.indexOf('\r\n', at);
      const size = Number.parseInt(body.slice(at, end), 16);
      if (!size) break;
      decoded += body.slice(end + 2, end + 2 + size);
      at = end + 2 + size + 2;
    }
    body = decoded;
  }
  return { status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? 0), headers, body };
}
