// A fast OpenAI-compatible upstream for benchmarks and the soak test: JSON completions, and SSE streams of
// `chunks` chunks paced `gapMs` apart (defaults 64 × 20 ms, as in the benchmark method), selected per request by
// the upstream model name: "stream-<chunks>-<gapMs>" or anything else for the defaults. Keep-alive, TCP_NODELAY,
// Content-Length on JSON. Usage: node bench/mock-upstream.mjs PORT
import { createServer } from 'node:http';

const port = Number(process.argv[2] ?? 0);
const answer = 'Switchboard benchmark answer. '.repeat(30).trim();

function completion(model) {
  return JSON.stringify({
    id: 'chatcmpl-bench',
    object: 'chat.completion',
    created: 1_700_000_000,
    model,
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: answer, refusal: null },
        logprobs: null,
        finish_reason: 'stop',
      },
    ],
    usage: { prompt_tokens: 12, completion_tokens: 180, total_tokens: 192 },
  });
}

function chunk(model, delta, finish = null) {
  return `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1_700_000_000, model, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] })}\n\n`;
}

const server = createServer({ noDelay: true, keepAliveTimeout: 300_000 }, (request, response) => {
  const parts = [];
  request.on('data', (part) => parts.push(part));
  request.on('end', () => {
    let body = {};
    try {
      body = JSON.parse(Buffer.concat(parts).toString('utf8'));
    } catch {}
    const model = String(body.model ?? 'mock');
    if (body.stream !== true) {
      const text = completion(model);
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      response.end(text);
      return;
    }
    const [, chunksText, gapText] = /^stream-(\d+)-(\d+)$/.exec(model) ?? [];
    const chunks = Number(chunksText ?? 64);
    const gapMs = Number(gapText ?? 20);
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    response.write(chunk(model, { role: 'assistant', content: '' }));
    let sent = 0;
    const timer = setInterval(() => {
      if (response.destroyed) {
        clearInterval(timer);
        return;
      }
      if (sent < chunks) {
        response.write(chunk(model, { content: `token${sent} ` }));
        sent++;
        return;
      }
      clearInterval(timer);
      response.write(chunk(model, {}, 'stop'));
      response.write(
        `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1_700_000_000, model, choices: [], usage: { prompt_tokens: 12, completion_tokens: chunks, total_tokens: 12 + chunks } })}\n\n`,
      );
      response.end('data: [DONE]\n\n');
    }, gapMs);
    response.on('close', () => clearInterval(timer));
  });
});
server.listen(port, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ event: 'listening', port: server.address().port })}\n`);
});
process.on('SIGTERM', () => process.exit(0));
