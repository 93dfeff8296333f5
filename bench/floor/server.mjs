// The floor: the least a Node.js proxy can do for the same job, with nothing of Switchboard in it. node:http in,
// undici Pool.request out (keep-alive, TCP_NODELAY), the request body passed through, the response piped back
// (streams included, chunk by chunk). No auth, no parsing, no log. Usage: node bench/floor/server.mjs PORT UPSTREAM
import { createServer } from 'node:http';
import { Pool } from 'undici';

const port = Number(process.argv[2] ?? 0);
const upstream = new URL(process.argv[3] ?? 'http://127.0.0.1:8000');
const pool = new Pool(upstream.origin, { connections: 1024, pipelining: 1, keepAliveTimeout: 300_000 });

const server = createServer({ keepAliveTimeout: 300_000 }, (request, response) => {
  const parts = [];
  request.on('data', (part) => parts.push(part));
  request.on('end', async () => {
    try {
      const upstreamResponse = await pool.request({
        path: request.url,
        method: request.method,
        headers: { 'content-type': 'application/json' },
        body: Buffer.concat(parts),
      });
      const type = upstreamResponse.headers['content-type'] ?? 'application/json';
      if (String(type).includes('text/event-stream')) {
        response.writeHead(upstreamResponse.statusCode, { 'content-type': type, 'cache-control': 'no-cache' });
        for await (const part of upstreamResponse.body) response.write(part);
        response.end();
        return;
      }
      const body = Buffer.from(await upstreamResponse.body.arrayBuffer());
      response.writeHead(upstreamResponse.statusCode, { 'content-type': type, 'content-length': body.length });
      response.end(body);
    } catch {
      response.writeHead(502).end();
    }
  });
});
server.listen(port, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ event: 'listening', port: server.address().port })}\n`);
});
process.on('SIGTERM', () => process.exit(0));
