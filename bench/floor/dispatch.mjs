// A stricter floor: the same bare proxy as server.mjs, but calling undici the way Switchboard does for non-streaming
// requests (Pool.dispatch with a handler that collects the body) instead of Pool.request and a body stream. Reported
// beside the floor the issue defines, so the ratio against a floor with the same upstream client is visible too.
// Non-streaming only. Usage: node bench/floor/dispatch.mjs PORT UPSTREAM
import { createServer } from 'node:http';
import { Pool } from 'undici';

const port = Number(process.argv[2] ?? 0);
const upstream = new URL(process.argv[3] ?? 'http://127.0.0.1:8000');
const pool = new Pool(upstream.origin, { connections: 1024, pipelining: 1, keepAliveTimeout: 300_000 });

const server = createServer({ keepAliveTimeout: 300_000 }, (request, response) => {
  const parts = [];
  request.on('data', (part) => parts.push(part));
  request.on('end', () => {
    const chunks = [];
    let status = 0;
    pool.dispatch(
      {
        path: request.url,
        method: request.method,
        headers: { 'content-type': 'application/json' },
        body: parts.length === 1 ? parts[0] : Buffer.concat(parts),
      },
      {
        onConnect() {},
        onHeaders(statusCode) {
          status = statusCode;
          return true;
        },
        onData(chunk) {
          chunks.push(chunk);
          return true;
        },
        onComplete() {
          const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
          response.writeHead(status, { 'content-type': 'application/json', 'content-length': body.length });
          response.end(body);
        },
        onError() {
          response.writeHead(502).end();
        },
      },
    );
  });
});
server.listen(port, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ event: 'listening', port: server.address().port })}\n`);
});
process.on('SIGTERM', () => process.exit(0));
