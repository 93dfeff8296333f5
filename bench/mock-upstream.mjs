// A fast OpenAI-compatible upstream for benchmarks and the soak test: JSON completions, and SSE streams of
// `chunks` chunks paced `gapMs` apart (defaults 64 × 20 ms, as in the benchmark method), selected per request by
// the upstream model name: "stream-<chunks>-<gapMs>" or anything else for the defaults. Keep-alive, TCP_NODELAY,
// Content-Length on JSON. POST /v1/messages answers the same in Anthropic's format (a message, or its named events:
// message_start, one text block of the same deltas, message_delta, message_stop), for bench/messages-cpu.mjs.
// Usage: node bench/mock-upstream.mjs PORT
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

function anthropicMessage(model) {
  return JSON.stringify({
    id: 'msg_bench',
    type: 'message',
    role: 'assistant',
    model,
    content: [{ type: 'text', text: answer }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 12, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 180 },
  });
}

const anthropicEvent = (type, data) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;

/** The events of a streamed Anthropic message of `chunks` text deltas, `gapMs` apart. */
function streamAnthropic(response, model, chunks, gapMs) {
  response.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  response.write(
    anthropicEvent('message_start', {
      message: {
        id: 'msg_bench',
        type: 'message',
        role: 'assistant',
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: 12, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 1 },
      },
    }) + anthropicEvent('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
  );
  pace(
    response,
    chunks,
    gapMs,
    (index) =>
      anthropicEvent('content_block_delta', { index: 0, delta: { type: 'text_delta', text: `token${index} ` } }),
    () =>
      response.end(
        anthropicEvent('content_block_stop', { index: 0 }) +
          anthropicEvent('message_delta', {
            delta: { stop_reason: 'end_turn', stop_sequence: null },
            usage: { output_tokens: chunks },
          }) +
          anthropicEvent('message_stop', {}),
      ),
  );
}

/** Writes `chunkAt(0)` to `chunkAt(chunks - 1)` one every `gapMs`, then calls `finish`; stops if the client goes. */
function pace(response, chunks, gapMs, chunkAt, finish) {
  let sent = 0;
  const timer = setInterval(() => {
    if (response.destroyed) {
      clearInterval(timer);
      return;
    }
    if (sent < chunks) {
      response.write(chunkAt(sent));
      sent++;
      return;
    }
    clearInterval(timer);
    finish();
  }, gapMs);
  response.on('close', () => clearInterval(timer));
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
    const [, chunksText, gapText] = /^stream-(\d+)-(\d+)$/.exec(model) ?? [];
    const chunks = Number(chunksText ?? 64);
    const gapMs = Number(gapText ?? 20);
    if (request.url?.startsWith('/v1/messages')) {
      if (body.stream === true) return streamAnthropic(response, model, chunks, gapMs);
      const text = anthropicMessage(model);
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      response.end(text);
      return;
    }
    if (body.stream !== true) {
      const text = completion(model);
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
      response.end(text);
      return;
    }
    response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    response.write(chunk(model, { role: 'assistant', content: '' }));
    pace(
      response,
      chunks,
      gapMs,
      (index) => chunk(model, { content: `token${index} ` }),
      () => {
        response.write(chunk(model, {}, 'stop'));
        response.write(
          `data: ${JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1_700_000_000, model, choices: [], usage: { prompt_tokens: 12, completion_tokens: chunks, total_tokens: 12 + chunks } })}\n\n`,
        );
        response.end('data: [DONE]\n\n');
      },
    );
  });
});
server.listen(port, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ event: 'listening', port: server.address().port })}\n`);
});
process.on('SIGTERM', () => process.exit(0));
