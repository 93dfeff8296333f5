import type { ServerResponse } from 'node:http';
import { type RecordedRequest, sendJson, sleep, splitIntoPieces, startMockServer, weatherCall } from './mock-server.js';

/**
 * A real HTTP server speaking Anthropic's Messages API (`POST /v1/messages`, anthropic-version 2023-06-01) as the
 * anthropic-sdk-python types and the streaming guide describe it: named SSE events (message_start,
 * content_block_start/delta/stop, ping, message_delta, message_stop, error), tool_use blocks with input_json_delta,
 * usage with cache read/write tokens, and the error body `{"type":"error","error":{type,message}}`. Like the real API
 * it refuses requests it would refuse (no max_tokens, a `system` role inside messages, roles that do not alternate,
 * a tool_result that answers no tool_use, tools without input_schema), so translation mistakes show up as failures.
 *
 * Behaviour is chosen by the upstream model name, as in mock-openai-upstream.ts: `mock` echoes the last user text;
 * `tools` calls get_weather, then answers from the tool result; `error-NNN`, `hang`, `reset`, `midstream-error`,
 * `midstream-reset`, `overloaded-first` (an overloaded_error before any content) misbehave on purpose.
 */

export interface MockAnthropicUpstream {
  url: string;
  /** base_url for a provider of type anthropic. */
  baseUrl: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

const errorTypes: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  504: 'timeout_error',
  529: 'overloaded_error',
};

function errorBody(type: string, message: string) {
  return { type: 'error', error: { type, message }, request_id: 'req_mock_anthropic' };
}

type Block = Record<string, unknown> & { type: string };
type Message = { role: string; content: string | Block[] };

function blocksOf(message: Message | undefined): Block[] {
  if (!message) return [];
  return typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
}

/** The checks the real API makes that a translator could get wrong. */
function validate(body: Record<string, unknown>): string | undefined {
  if (typeof body.max_tokens !== 'number') return 'max_tokens: Field required';
  if (typeof body.model !== 'string') return 'model: Field required';
  const messages = body.messages as Message[] | undefined;
  if (!Array.isArray(messages) || messages.length === 0) return 'messages: at least one message is required';
  let previousRole = '';
  const toolUseIds = new Set<string>();
  for (const [index, message] of messages.entries()) {
    if (message.role !== 'user' && message.role !== 'assistant') {
      return `messages.${index}.role: Input should be 'user' or 'assistant'`;
    }
    if (message.role === previousRole) return `messages.${index}: roles must alternate between "user" and "assistant"`;
    previousRole = message.role;
    const blocks = blocksOf(message);
    if (blocks.length === 0) return `messages.${index}: all messages must have non-empty content`;
    blocks.forEach((block) => {
      if (block.type === 'tool_use') toolUseIds.add(String(block.id));
    });
    for (const block of blocks) {
      if (block.type === 'text' && block.text === '') return `messages.${index}: text content blocks must be non-empty`;
      if (block.type === 'tool_result' && !toolUseIds.has(String(block.tool_use_id))) {
        return `messages.${index}: unexpected tool_use_id found in tool_result blocks: ${String(block.tool_use_id)}`;
      }
      if (block.type === 'tool_use' && (typeof block.input !== 'object' || Array.isArray(block.input))) {
        return `messages.${index}: tool_use.input: Input should be a valid dictionary`;
      }
    }
  }
  for (const tool of (body.tools ?? []) as Array<Record<string, unknown>>) {
    if (!tool.input_schema) return 'tools.0.custom.input_schema: Field required';
  }
  if (typeof body.temperature === 'number' && (body.temperature < 0 || body.temperature > 1)) {
    return 'temperature: Input should be less than or equal to 1';
  }
  return undefined;
}

function lastUserText(body: Record<string, unknown>): string {
  const messages = (body.messages ?? []) as Message[];
  const last = [...messages].reverse().find((message) => message.role === 'user');
  return blocksOf(last)
    .filter((block) => block.type === 'text')
    .map((block) => block.text)
    .join(' ');
}

function lastToolResult(body: Record<string, unknown>): string | undefined {
  const messages = (body.messages ?? []) as Message[];
  const last = messages.at(-1);
  if (last?.role !== 'user') return undefined;
  const result = blocksOf(last).find((block) => block.type === 'tool_result');
  if (!result) return undefined;
  const content = result.content as string | Block[];
  return typeof content === 'string' ? content : content.map((block) => block.text).join('');
}

function usageFor(body: Record<string, unknown>, output: string) {
  return {
    input_tokens: Math.max(1, Math.ceil(JSON.stringify(body.messages ?? []).length / 4)),
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    output_tokens: Math.max(1, Math.ceil(output.length / 4)),
  };
}

interface Answer {
  text: string;
  toolUse?: { id: string; name: string; input: Record<string, unknown> };
}

function answerFor(model: string, body: Record<string, unknown>): Answer {
  if (model === 'tools' && Array.isArray(body.tools) && body.tools.length > 0) {
    const result = lastToolResult(body);
    if (result !== undefined) return { text: `The weather: ${result}` };
    return {
      text: 'Let me check.',
      toolUse: { id: 'toolu_mock_1', name: weatherCall.name, input: weatherCall.arguments },
    };
  }
  return { text: `Echo: ${lastUserText(body)}` };
}

function message(model: string, body: Record<string, unknown>, answer: Answer) {
  const content: Block[] = [{ type: 'text', text: answer.text }];
  if (answer.toolUse) content.push({ type: 'tool_use', ...answer.toolUse });
  return {
    id: 'msg_mock123',
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: answer.toolUse ? 'tool_use' : 'end_turn',
    stop_sequence: null,
    usage: usageFor(body, answer.text),
  };
}

interface StreamOptions {
  delayMs?: number;
  /** After this many text deltas: destroy the socket, or send an overloaded_error event. */
  failAfter?: number;
  failure?: 'reset' | 'error-event';
}

async function stream(
  response: ServerResponse,
  model: string,
  body: Record<string, unknown>,
  answer: Answer,
  options: StreamOptions = {},
) {
  response.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  const send = (type: string, data: Record<string, unknown>) =>
    response.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  const usage = usageFor(body, answer.text);
  send('message_start', {
    message: {
      id: 'msg_mockstream',
      type: 'message',
      role: 'assistant',
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { ...usage, output_tokens: 1 },
    },
  });
  if (options.failAfter === 0) {
    send('error', { error: { type: 'overloaded_error', message: 'Overloaded' } });
    response.end();
    return;
  }
  send('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
  send('ping', {});
  let sent = 0;
  for (const piece of splitIntoPieces(answer.text)) {
    if (options.failAfter !== undefined && sent >= options.failAfter) {
      if (options.failure === 'reset') {
        response.socket?.destroy();
        return;
      }
      send('error', { error: { type: 'overloaded_error', message: 'Overloaded' } });
      response.end();
      return;
    }
    if (options.delayMs) await sleep(options.delayMs);
    if (response.destroyed) return;
    send('content_block_delta', { index: 0, delta: { type: 'text_delta', text: piece } });
    sent++;
  }
  send('content_block_stop', { index: 0 });
  if (answer.toolUse) {
    send('content_block_start', {
      index: 1,
      content_block: { type: 'tool_use', id: answer.toolUse.id, name: answer.toolUse.name, input: {} },
    });
    for (const piece of splitIntoPieces(JSON.stringify(answer.toolUse.input), 7)) {
      send('content_block_delta', { index: 1, delta: { type: 'input_json_delta', partial_json: piece } });
    }
    send('content_block_stop', { index: 1 });
  }
  send('message_delta', {
    delta: { stop_reason: answer.toolUse ? 'tool_use' : 'end_turn', stop_sequence: null },
    usage: { output_tokens: usage.output_tokens },
  });
  send('message_stop', {});
  response.end();
}

export async function startMockAnthropicUpstream(): Promise<MockAnthropicUpstream> {
  const server = await startMockServer(async (request, response) => {
    if (request.method !== 'POST' || request.path !== '/v1/messages') {
      return sendJson(response, 404, errorBody('not_found_error', `Not found: ${request.path}`));
    }
    if (request.headers['anthropic-version'] !== '2023-06-01') {
      return sendJson(response, 400, errorBody('invalid_request_error', 'anthropic-version: header is required'));
    }
    if (typeof request.headers['x-api-key'] !== 'string') {
      return sendJson(response, 401, errorBody('authentication_error', 'x-api-key header is required'));
    }
    const body = request.body;
    const model = String(body.model ?? '');
    const statusMatch = /^error-(\d{3})$/.exec(model);
    if (statusMatch) {
      const status = Number(statusMatch[1]);
      const type = errorTypes[status] ?? 'api_error';
      const message = status === 529 ? 'Overloaded' : `mock upstream error ${status}`;
      return sendJson(response, status, errorBody(type, message), status === 429 ? { 'retry-after': '7' } : {});
    }
    const invalid = validate(body);
    if (invalid) return sendJson(response, 400, errorBody('invalid_request_error', invalid));
    const streaming = body.stream === true;
    const answer = answerFor(model, body);
    switch (model) {
      case 'hang':
        return;
      case 'reset':
        response.socket?.destroy();
        return;
      case 'overloaded-first':
        return stream(response, model, body, answer, { failAfter: 0 });
      case 'midstream-error':
        return stream(response, model, body, answer, { failAfter: 2, failure: 'error-event', delayMs: 20 });
      case 'midstream-reset':
        return stream(response, model, body, answer, { failAfter: 2, failure: 'reset', delayMs: 20 });
      default:
        if (streaming) return stream(response, model, body, answer);
        return sendJson(response, 200, message(model, body, answer), { 'request-id': 'req_mock_anthropic' });
    }
  });
  return { url: server.url, baseUrl: `${server.url}/v1`, requests: server.requests, close: server.close };
}
