import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { answerEmbeddings } from './mock-openai-embeddings.js';
import { answerTextCompletion } from './mock-openai-text-completions.js';
import { sendJson } from './mock-server.js';

/**
 * A real HTTP server speaking the OpenAI chat-completions wire format, for integration tests. It records every
 * request it receives (so tests assert exactly what the gateway sent upstream) and picks its behaviour from the
 * upstream model name: `mock` answers normally; `tools` calls get_weather, then answers from the tool's result; names like `error-429`, `hang`, `midstream-reset` misbehave on
 * purpose. Tests can also install a handler for a model name. `/embeddings` and the legacy `/completions` are answered
 * too (mock-openai-embeddings.ts, mock-openai-text-completions.ts), with the same error-NNN, hang and reset names.
 */

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
  /** Set when the gateway closed the connection before the response was complete. */
  aborted: boolean;
}

export type MockHandler = (request: RecordedRequest, response: ServerResponse) => void | Promise<void>;

export interface MockUpstream {
  url: string;
  /** base_url for the gateway's provider config */
  baseUrl: string;
  requests: RecordedRequest[];
  on(model: string, handler: MockHandler): void;
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function lastUserText(body: Record<string, unknown>): string {
  const messages = (body.messages ?? []) as Array<{ role: string; content: unknown }>;
  const last = [...messages].reverse().find((message) => message.role === 'user');
  if (!last) return '';
  if (typeof last.content === 'string') return last.content;
  if (Array.isArray(last.content)) {
    return last.content
      .filter((part: { type?: string }) => part.type === 'text')
      .map((part: { text?: string }) => part.text)
      .join(' ');
  }
  return '';
}

export function answerFor(body: Record<string, unknown>): string {
  return `Echo: ${lastUserText(body)}`;
}

function usageFor(body: Record<string, unknown>, content: string) {
  const prompt = Math.max(1, Math.ceil(JSON.stringify(body.messages ?? []).length / 4));
  const completion = Math.max(1, Math.ceil(content.length / 4));
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0 },
  };
}

function openAiError(message: string, type: string, code: string | null = null) {
  return { error: { message, type, param: null, code } };
}

/** The answer of the `structured` scenario, whatever the schema. */
export const structuredAnswer = { city: 'Paris', temperature: 21 };

const toolCall = {
  id: 'call_mock_1',
  type: 'function',
  function: { name: 'get_weather', arguments: '{"city":"Paris","unit":"celsius"}' },
};

function completion(
  model: string,
  content: string | null,
  body: Record<string, unknown>,
  extra: Record<string, unknown> = {},
) {
  return {
    id: 'chatcmpl-mock123',
    object: 'chat.completion',
    created: 1_700_000_000,
    model,
    system_fingerprint: 'fp_mock',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content, refusal: null, annotations: [] },
        logprobs: null,
        finish_reason: 'stop',
      },
    ],
    usage: usageFor(body, content ?? ''),
    ...extra,
  };
}

interface StreamOptions {
  pieces: string[];
  delayMs?: number;
  repeatRole?: boolean;
  usage?: boolean;
  tools?: boolean;
  /** Stop after this many content pieces and then: destroy the socket, end cleanly, or send an error event. */
  failAfter?: number;
  failure?: 'reset' | 'truncate' | 'error-event';
}

async function stream(response: ServerResponse, request: RecordedRequest, model: string, options: StreamOptions) {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const base = {
    id: 'chatcmpl-mockstream',
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model,
    system_fingerprint: 'fp_mock',
  };
  const includeUsage = (request.body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;
  const send = (chunk: Record<string, unknown>) => {
    const usage = includeUsage && options.usage !== false ? { usage: null } : {};
    response.write(`data: ${JSON.stringify({ ...base, ...chunk, ...usage })}\n\n`);
  };
  send({ choices: [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }] });
  let sent = 0;
  for (const piece of options.pieces) {
    if (options.failAfter !== undefined && sent >= options.failAfter) {
      if (options.failure === 'reset') {
        response.socket?.destroy();
        return;
      }
      if (options.failure === 'error-event') {
        response.write(`data: ${JSON.stringify(openAiError('The model crashed mid-stream', 'server_error'))}\n\n`);
        response.end();
        return;
      }
      response.end();
      return;
    }
    if (options.delayMs) await sleep(options.delayMs);
    if (response.destroyed) return;
    const delta: Record<string, unknown> = { content: piece };
    if (options.repeatRole) delta.role = 'assistant';
    send({ choices: [{ index: 0, delta, logprobs: null, finish_reason: null }] });
    sent++;
  }
  let finish = 'stop';
  if (options.tools) {
    const args = toolCall.function.arguments;
    send({
      choices: [
        {
          index: 0,
          delta: {
            tool_calls: [
              {
                index: 0,
                id: toolCall.id,
                type: 'function',
                function: { name: toolCall.function.name, arguments: '' },
              },
            ],
          },
          logprobs: null,
          finish_reason: null,
        },
      ],
    });
    for (let offset = 0; offset < args.length; offset += 7) {
      // Some servers repeat id/name in every delta and omit `type`; the gateway must normalise that.
      send({
        choices: [
          {
            index: 0,
            delta: {
              tool_calls: [
                {
                  index: 0,
                  id: toolCall.id,
                  function: { name: toolCall.function.name, arguments: args.slice(offset, offset + 7) },
                },
              ],
            },
            logprobs: null,
            finish_reason: null,
          },
        ],
      });
    }
    finish = 'tool_calls';
  }
  send({ choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: finish }] });
  if (includeUsage && options.usage !== false) {
    response.write(
      `data: ${JSON.stringify({ ...base, choices: [], usage: usageFor(request.body, options.pieces.join('')) })}\n\n`,
    );
  }
  response.write('data: [DONE]\n\n');
  response.end();
}

function splitIntoPieces(text: string): string[] {
  return text.match(/.{1,6}/gs) ?? [];
}

/** The standard behaviour for a model name, for handlers that misbehave only sometimes. */
export async function defaultBehaviour(request: RecordedRequest, response: ServerResponse): Promise<void> {
  const body = request.body;
  const model = String(body.model ?? 'mock');
  const streaming = body.stream === true;
  const content = answerFor(body);
  const statusMatch = /^error-(\d{3})$/.exec(model);
  if (statusMatch) {
    const status = Number(statusMatch[1]);
    const headers: Record<string, string> = status === 429 ? { 'retry-after': '7' } : {};
    const type = status === 429 ? 'requests' : status >= 500 ? 'server_error' : 'invalid_request_error';
    const code = status === 429 ? 'rate_limit_exceeded' : status === 400 ? 'context_length_exceeded' : null;
    return sendJson(response, status, openAiError(`mock upstream error ${status}`, type, code), headers);
  }
  if (model === 'hang') return; // never answers; the gateway's first-byte timeout must fire
  if (request.path.endsWith('/embeddings')) {
    if (model === 'reset') return void response.socket?.destroy();
    return answerEmbeddings(request, response);
  }
  if (request.path.endsWith('/completions') && !request.path.endsWith('/chat/completions')) {
    if (model === 'reset') return void response.socket?.destroy();
    return answerTextCompletion(request, response);
  }
  switch (model) {
    case 'reset':
      response.socket?.destroy();
      return;
    case 'garbage':
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('<html>this is not json</html>');
      return;
    case 'html-502':
      response.writeHead(502, { 'content-type': 'text/html' });
      response.end('<html><body>Bad Gateway</body></html>');
      return;
    case 'error-in-200':
      return sendJson(response, 200, openAiError('upstream failed but said 200', 'server_error'));
    case 'no-usage': {
      if (streaming) return stream(response, request, model, { pieces: splitIntoPieces(content), usage: false });
      const { usage: _usage, ...rest } = completion(model, content, body);
      return sendJson(response, 200, rest);
    }
    case 'tools': {
      // After the tool ran, the model answers from its result.
      const last = (body.messages as Array<{ role: string; content: unknown }> | undefined)?.at(-1);
      if (last?.role === 'tool') {
        const text = `The weather: ${String(last.content)}`;
        if (streaming) return stream(response, request, model, { pieces: splitIntoPieces(text) });
        return sendJson(response, 200, completion(model, text, body));
      }
      if (streaming) return stream(response, request, model, { pieces: [], tools: true });
      return sendJson(response, 200, {
        ...completion(model, null, body),
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: null, refusal: null, tool_calls: [toolCall] },
            logprobs: null,
            finish_reason: 'tool_calls',
          },
        ],
      });
    }
    case 'structured': {
      // Structured output: the JSON the request's schema asks for (compat tests' `{city, temperature}`).
      const json = JSON.stringify(structuredAnswer);
      if (streaming) return stream(response, request, model, { pieces: splitIntoPieces(json) });
      return sendJson(response, 200, completion(model, json, body));
    }
    case 'repeat-role':
      return stream(response, request, model, { pieces: splitIntoPieces(content), repeatRole: true });
    case 'json-for-stream':
      return sendJson(response, 200, completion(model, content, body));
    case 'midstream-reset':
      return stream(response, request, model, {
        pieces: splitIntoPieces(content),
        failAfter: 2,
        failure: 'reset',
        delayMs: 30,
      });
    case 'midstream-truncate':
      return stream(response, request, model, {
        pieces: splitIntoPieces(content),
        failAfter: 2,
        failure: 'truncate',
        delayMs: 30,
      });
    case 'midstream-error':
      return stream(response, request, model, {
        pieces: splitIntoPieces(content),
        failAfter: 2,
        failure: 'error-event',
        delayMs: 30,
      });
    case 'slow-stream':
      // 50 pieces, 100 ms apart: long enough for disconnect and shutdown tests.
      return stream(response, request, model, {
        pieces: Array.from({ length: 50 }, (_, index) => `w${index} `),
        delayMs: 100,
      });
    case 'slow-json':
      await sleep(800);
      return sendJson(response, 200, completion(model, content, body));
    default:
      if (streaming) return stream(response, request, model, { pieces: splitIntoPieces(content) });
      return sendJson(response, 200, completion(model, content, body));
  }
}

export async function startMockUpstream(): Promise<MockUpstream> {
  const requests: RecordedRequest[] = [];
  const handlers = new Map<string, MockHandler>();
  const server: Server = createServer((incoming, response) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
      } catch {
        body = { unparseable: Buffer.concat(chunks).toString('utf8') };
      }
      const recorded: RecordedRequest = {
        method: incoming.method ?? '',
        path: incoming.url ?? '',
        headers: incoming.headers,
        body,
        aborted: false,
      };
      requests.push(recorded);
      response.on('close', () => {
        if (!response.writableFinished) recorded.aborted = true;
      });
      const handler = handlers.get(String(body.model)) ?? defaultBehaviour;
      Promise.resolve(handler(recorded, response)).catch(() => response.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    baseUrl: `${url}/v1`,
    requests,
    on: (model, handler) => handlers.set(model, handler),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
