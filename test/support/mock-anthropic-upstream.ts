import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { type RecordedRequest, sendJson, sleep, splitIntoPieces, startMockServer, weatherCall } from './mock-server.js';

/**
 * A real HTTP server speaking Anthropic's Messages API (`POST /v1/messages`, anthropic-version 2023-06-01) as the
 * anthropic-sdk-python types and the streaming guide describe it: named SSE events (message_start,
 * content_block_start/delta/stop, ping, message_delta, message_stop, error), tool_use blocks with input_json_delta,
 * usage with cache read/write tokens, and the error body `{"type":"error","error":{type,message}}`. Like the real API
 * it refuses what it would refuse, so translation and pass-through mistakes show up as failures: no (dated)
 * `anthropic-version`, no (or, when the mock was given one, the wrong) `x-api-key`, no `max_tokens`, a `system` role
 * inside messages, empty content (but in a final assistant turn), a tool_use without its tool_result right after, a
 * tool_result that answers no tool_use of the turn before, tool results after other content of their turn, tools
 * without input_schema, a thinking block whose signature is not the one the mock issued for its text, thinking on
 * while the assistant turn whose tool calls are answered does not start with its thinking, thinking a Claude model
 * (by its name) does not take (see checkThinkingForModel), a `thinking.display` other than `summarized` or `omitted`,
 * `temperature`, `top_p` or `top_k` at other than its default to the models that take no sampling (checkSampling, in
 * the real API's words: `` `temperature` is deprecated for this model. ``). Consecutive
 * turns of one role are combined, and an assistant turn may come first, as the API does today (its docs: "Consecutive
 * user or assistant turns in your request will be combined into a single turn").
 *
 * Behaviour is chosen by the upstream model name, as in mock-openai-upstream.ts: `mock` echoes the last user text;
 * `tools` calls get_weather, then answers from the tool result; `thinking-tools` does the same, and with thinking on
 * starts each answer with a signed thinking block (streamed as thinking_delta pieces and a signature_delta) and a
 * redacted_thinking block; a `claude-…` name with thinking on starts its echo with signed thinking (empty where an
 * adaptive-only model was not asked for `display: "summarized"`); `thinking` answers with the recorded answer of
 * test/fixtures/messages/native-thinking.{json,sse} byte for byte (thinking with a signature, redacted thinking, text,
 * a tool call, cache usage), for pass-through tests; `error-NNN`, `hang`, `reset`, `midstream-error`,
 * `midstream-reset`, `overloaded-first` (an overloaded_error before any content), `slow-stream` (50 deltas 100 ms
 * apart) misbehave on purpose.
 * `POST /v1/messages/count_tokens` answers `{"input_tokens": N}` (a quarter of the prompt's JSON length).
 */

export interface MockAnthropicUpstreamOptions {
  /** When set, requests must carry exactly this `x-api-key` (otherwise any key is taken). */
  apiKey?: string;
}

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

/** The signature the mock issues for a thinking block's text, and checks when the block comes back. */
export function signThinking(thinking: string): string {
  return createHash('sha256').update(`mock-anthropic-thinking:${thinking}`).digest('base64');
}

const fixture = (name: string) => readFileSync(new URL(`../fixtures/messages/${name}`, import.meta.url));

/** The `thinking` model's answers, exactly as they go out. */
export const thinkingAnswer = { json: fixture('native-thinking.json'), sse: fixture('native-thinking.sse') };

function errorBody(type: string, message: string) {
  return { type: 'error', error: { type, message }, request_id: 'req_mock_anthropic' };
}

type Block = Record<string, unknown> & { type: string };
type Message = { role: string; content: string | Block[] };

function blocksOf(message: Message | undefined): Block[] {
  if (!message) return [];
  return typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
}

interface Turn {
  role: string;
  /** The index of the turn's first message. */
  index: number;
  blocks: Block[];
}

/** Consecutive messages of one role are one turn, as the API combines them. */
function turnsOf(messages: Message[]): Turn[] {
  const turns: Turn[] = [];
  messages.forEach((message, index) => {
    const last = turns.at(-1);
    if (last && last.role === message.role) last.blocks.push(...blocksOf(message));
    else turns.push({ role: message.role, index, blocks: [...blocksOf(message)] });
  });
  return turns;
}

function checkToolPairs(turns: Turn[]): string | undefined {
  for (const [position, turn] of turns.entries()) {
    const previous = turns[position - 1];
    const uses = new Set(
      previous?.role === 'assistant'
        ? previous.blocks.filter((block) => block.type === 'tool_use').map((block) => String(block.id))
        : [],
    );
    const results = turn.blocks.filter((block) => block.type === 'tool_result');
    for (const result of results) {
      if (!uses.has(String(result.tool_use_id))) {
        return `messages.${turn.index}.content: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${String(result.tool_use_id)}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
      }
    }
    if (turn.blocks.slice(0, results.length).some((block) => block.type !== 'tool_result')) {
      return `messages.${turn.index}.content: \`tool_result\` blocks must come before any other content in a user message.`;
    }
    if (uses.size > 0) {
      const answered = new Set(results.map((result) => String(result.tool_use_id)));
      const missing = [...uses].filter((id) => !answered.has(id));
      if (missing.length > 0) {
        return `messages.${turn.index}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
      }
    }
  }
  return undefined;
}

function checkBlocks(turn: Turn, last: boolean): string | undefined {
  if (turn.blocks.length === 0 && !(last && turn.role === 'assistant')) {
    return `messages.${turn.index}: all messages must have non-empty content except for the optional final assistant message`;
  }
  for (const block of turn.blocks) {
    if (block.type === 'text' && block.text === '')
      return `messages.${turn.index}: text content blocks must be non-empty`;
    if (block.type === 'tool_use' && (typeof block.input !== 'object' || Array.isArray(block.input))) {
      return `messages.${turn.index}: tool_use.input: Input should be a valid dictionary`;
    }
    if (block.type === 'thinking' && block.signature !== signThinking(String(block.thinking))) {
      return `messages.${turn.index}.content: Invalid \`signature\` in \`thinking\` block`;
    }
  }
  return undefined;
}

/**
 * With thinking on, the assistant turn whose tool calls are being answered must start with its thinking, as the real
 * API requires (its own wording): a tool loop cannot go on without the signed thinking that led to the calls.
 */
function checkThinkingInToolLoop(body: Record<string, unknown>, turns: Turn[]): string | undefined {
  const type = (body.thinking as { type?: unknown } | undefined)?.type;
  if (type !== 'enabled' && type !== 'adaptive') return undefined;
  const assistant = turns.findLast((turn) => turn.role === 'assistant');
  if (!assistant?.blocks.some((block) => block.type === 'tool_use')) return undefined;
  const first = assistant.blocks[0];
  if (first?.type === 'thinking' || first?.type === 'redacted_thinking') return undefined;
  return `messages.${assistant.index}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${String(first?.type)}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable \`thinking\`.`;
}

/**
 * How the real API takes thinking per model, by the upstream name (Anthropic's, Bedrock's or Vertex's spelling), in
 * its own words where they are known: Opus 4.7 and later, Claude 5, Mythos and Fable refuse `enabled`; models before
 * Opus and Sonnet 4.6 refuse `adaptive`; Claude 3.5 and older cannot think and refuse `thinking` and an effort; Opus
 * and Sonnet 4.6 and Mythos Preview have no `xhigh` effort; Mythos, Fable and Opus and Sonnet 5.5 cannot turn thinking
 * off (`disabled`), and Opus 5 only up to effort `high`; of the models asked with a budget only Opus 4.5 takes `output_config.effort`; a budget is at least
 * 1024 tokens and under `max_tokens`, for any model. Names that are not Claude's (`mock`, `thinking-tools`, …) take any
 * thinking.
 */
const adaptiveOnlyModel = /claude-(?:opus-4-(?:[7-9]|[1-9]\d)(?!\d)|(?:opus|sonnet|haiku)-[5-9])|fable|mythos/;
const adaptiveModel = /claude-(?:opus|sonnet)-4-6/;
const noThinkingModel = /claude-(?:3-5|3-(?:opus|sonnet|haiku)|2|instant|v\d)/;
const noXhighModel = /claude-(?:opus|sonnet)-4-6|mythos-preview/;
const alwaysThinkingModel = /mythos|fable|claude-(?:opus|sonnet)-5-5/;
const noEffortModel = /claude-(?:3-7|(?:opus|sonnet)-4(?!-[5-9])|sonnet-4-5|haiku-4-5)/;
/** Opus 4.7 and later, Sonnet 5 and later, Haiku 5.5 and later, Mythos and Fable: sampling only at its default. */
const noSamplingModel =
  /claude-(?:opus-4-(?:[7-9]|\d\d)(?!\d)|opus-[5-9]|sonnet-[5-9]|haiku-5-[5-9]|haiku-[6-9])|fable|mythos/;
const samplingDefaults: Record<string, number | undefined> = { temperature: 1, top_p: 1, top_k: undefined };

/** The first sampling parameter a model that takes none is given at other than its default, in Anthropic's words. */
function checkSampling(body: Record<string, unknown>): string | undefined {
  if (!noSamplingModel.test(String(body.model ?? '').toLowerCase())) return undefined;
  for (const [name, fallback] of Object.entries(samplingDefaults)) {
    if (body[name] !== undefined && body[name] !== fallback) return `\`${name}\` is deprecated for this model.`;
  }
  return undefined;
}

/** Anthropic's checks of a budget, in its words. */
function checkBudget(body: Record<string, unknown>): string | undefined {
  const thinking = body.thinking as { type?: unknown; budget_tokens?: unknown } | undefined;
  if (thinking?.type !== 'enabled') return undefined;
  const budget = thinking.budget_tokens;
  if (typeof budget !== 'number') return 'thinking.enabled.budget_tokens: Field required';
  if (budget < 1024) return 'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024';
  if (typeof body.max_tokens === 'number' && body.max_tokens <= budget) {
    return '`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size';
  }
  return undefined;
}

function checkThinkingForModel(body: Record<string, unknown>): string | undefined {
  const model = String(body.model ?? '').toLowerCase();
  const thinking = body.thinking as { type?: unknown } | undefined;
  const effort = (body.output_config as { effort?: unknown } | undefined)?.effort;
  const type = thinking?.type;
  if (noThinkingModel.test(model)) {
    if (type !== undefined && type !== 'disabled') return 'thinking: This model does not support extended thinking.';
    if (effort !== undefined) return 'output_config.effort: This model does not support the effort parameter.';
    return undefined;
  }
  const display = (thinking as { display?: unknown } | undefined)?.display;
  if (display !== undefined && display !== 'summarized' && display !== 'omitted') {
    return `thinking.${String(type)}.display: Input should be 'summarized' or 'omitted'`;
  }
  if (type === 'disabled' && alwaysThinkingModel.test(model)) {
    return '"thinking.type.disabled" is not supported for this model. Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.';
  }
  if (type === 'disabled' && (effort === 'xhigh' || effort === 'max') && /claude-opus-5(?!-\d(?!\d{7}))/.test(model)) {
    return '"thinking.type.disabled" is only supported with "output_config.effort" up to "high" on this model.';
  }
  if (effort !== undefined && noEffortModel.test(model)) {
    return 'output_config.effort: This model does not support the effort parameter.';
  }
  if (type === 'enabled' && adaptiveOnlyModel.test(model)) {
    return '"thinking.type.enabled" is not supported for this model. Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.';
  }
  if (
    type === 'adaptive' &&
    model.startsWith('claude-') &&
    !adaptiveOnlyModel.test(model) &&
    !adaptiveModel.test(model)
  ) {
    return 'adaptive thinking is not supported on this model';
  }
  if (effort === 'xhigh' && noXhighModel.test(model)) {
    return "output_config.effort: Input should be 'low', 'medium', 'high' or 'max'";
  }
  return checkBudget(body);
}

/** The checks the real API makes that a translation or a pass-through could get wrong. */
function validate(body: Record<string, unknown>, countOnly = false): string | undefined {
  if (!countOnly && typeof body.max_tokens !== 'number') return 'max_tokens: Field required';
  if (typeof body.model !== 'string') return 'model: Field required';
  const messages = body.messages as Message[] | undefined;
  if (!Array.isArray(messages) || messages.length === 0) return 'messages: at least one message is required';
  for (const [index, message] of messages.entries()) {
    if (message.role !== 'user' && message.role !== 'assistant') {
      return `messages.${index}.role: Input should be 'user' or 'assistant'`;
    }
  }
  const turns = turnsOf(messages);
  for (const [position, turn] of turns.entries()) {
    const problem = checkBlocks(turn, position === turns.length - 1);
    if (problem) return problem;
  }
  const pairing = checkToolPairs(turns);
  if (pairing) return pairing;
  const thinking =
    checkThinkingInToolLoop(body, turns) ??
    checkThinkingForModel(body) ??
    (countOnly ? undefined : checkSampling(body));
  if (thinking) return thinking;
  for (const [index, tool] of ((body.tools ?? []) as Array<Record<string, unknown>>).entries()) {
    if ((tool.type === undefined || tool.type === 'custom') && !tool.input_schema) {
      return `tools.${index}.custom.input_schema: Field required`;
    }
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
  // `content` is optional in Anthropic's API (a tool that returned nothing); anything else odd reads as nothing too.
  const content = result.content as unknown;
  if (typeof content === 'string') return content;
  return Array.isArray(content) ? content.map((block: Block) => block.text).join('') : '';
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
  /** Signed thinking, then redacted thinking, before the text. */
  thinking?: { thinking: string; redacted: string };
}

function thinkingOn(body: Record<string, unknown>): boolean {
  const type = (body.thinking as { type?: unknown } | undefined)?.type;
  return type === 'enabled' || type === 'adaptive';
}

function toolAnswer(body: Record<string, unknown>): Answer {
  const result = lastToolResult(body);
  if (result !== undefined) return { text: `The weather: ${result}` };
  return {
    text: 'Let me check.',
    toolUse: { id: 'toolu_mock_1', name: weatherCall.name, input: weatherCall.arguments },
  };
}

function answerFor(model: string, body: Record<string, unknown>): Answer {
  const tools = Array.isArray(body.tools) && body.tools.length > 0;
  if (model === 'tools' && tools) return toolAnswer(body);
  if (model === 'thinking-tools' && tools) {
    const answer = toolAnswer(body);
    if (!thinkingOn(body)) return answer;
    const step = answer.toolUse ? 'ask the weather tool' : 'read the tool result';
    return {
      ...answer,
      thinking: { thinking: `I should ${step}, "quoted" \u00e9.`, redacted: 'EmwKAhgBEgyMockRedacted' },
    };
  }
  const echo = lastUserText(body);
  // A Claude model thinks when asked; from Opus 4.7 on its thinking text is only there with display "summarized".
  if (model.startsWith('claude-') && thinkingOn(body)) {
    const display = (body.thinking as { display?: unknown }).display;
    const omitted = adaptiveOnlyModel.test(model) && display !== 'summarized';
    return { text: `Echo: ${echo}`, thinking: { thinking: omitted ? '' : `Thinking about: ${echo}`, redacted: '' } };
  }
  return { text: `Echo: ${echo}` };
}

function message(model: string, body: Record<string, unknown>, answer: Answer) {
  const content: Block[] = [];
  if (answer.thinking) {
    const { thinking, redacted } = answer.thinking;
    content.push({ type: 'thinking', thinking, signature: signThinking(thinking) });
    if (redacted) content.push({ type: 'redacted_thinking', data: redacted });
  }
  content.push({ type: 'text', text: answer.text });
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
  let index = 0;
  if (answer.thinking) {
    const { thinking, redacted } = answer.thinking;
    send('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } });
    for (const piece of splitIntoPieces(thinking, 5)) {
      send('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: piece } });
    }
    send('content_block_delta', { index, delta: { type: 'signature_delta', signature: signThinking(thinking) } });
    send('content_block_stop', { index });
    index++;
    if (redacted) {
      send('content_block_start', { index, content_block: { type: 'redacted_thinking', data: redacted } });
      send('content_block_stop', { index });
      index++;
    }
  }
  const textIndex = index;
  send('content_block_start', { index: textIndex, content_block: { type: 'text', text: '' } });
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
    send('content_block_delta', { index: textIndex, delta: { type: 'text_delta', text: piece } });
    sent++;
  }
  send('content_block_stop', { index: textIndex });
  if (answer.toolUse) {
    const toolIndex = textIndex + 1;
    send('content_block_start', {
      index: toolIndex,
      content_block: { type: 'tool_use', id: answer.toolUse.id, name: answer.toolUse.name, input: {} },
    });
    for (const piece of splitIntoPieces(JSON.stringify(answer.toolUse.input), 7)) {
      send('content_block_delta', { index: toolIndex, delta: { type: 'input_json_delta', partial_json: piece } });
    }
    send('content_block_stop', { index: toolIndex });
  }
  send('message_delta', {
    delta: { stop_reason: answer.toolUse ? 'tool_use' : 'end_turn', stop_sequence: null },
    usage: { output_tokens: usage.output_tokens },
  });
  send('message_stop', {});
  response.end();
}

function sendRecorded(response: ServerResponse, body: Buffer, contentType: string) {
  response.writeHead(200, { 'content-type': contentType, 'request-id': 'req_mock_anthropic' });
  response.end(body);
}

export async function startMockAnthropicUpstream(
  options: MockAnthropicUpstreamOptions = {},
): Promise<MockAnthropicUpstream> {
  const server = await startMockServer(async (request, response) => {
    const path = request.path.split('?')[0];
    if (request.method !== 'POST' || (path !== '/v1/messages' && path !== '/v1/messages/count_tokens')) {
      return sendJson(response, 404, errorBody('not_found_error', `Not found: ${request.path}`));
    }
    // Any dated version: the newest SDKs send theirs (2026-10-21), older clients 2023-06-01.
    const version = request.headers['anthropic-version'];
    if (typeof version !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(version)) {
      return sendJson(response, 400, errorBody('invalid_request_error', 'anthropic-version: header is required'));
    }
    const key = request.headers['x-api-key'];
    if (typeof key !== 'string' || (options.apiKey !== undefined && key !== options.apiKey)) {
      return sendJson(response, 401, errorBody('authentication_error', 'invalid x-api-key'));
    }
    const body = request.body;
    if (path === '/v1/messages/count_tokens') {
      const invalid = validate(body, true);
      if (invalid) return sendJson(response, 400, errorBody('invalid_request_error', invalid));
      const prompt = JSON.stringify({ system: body.system, messages: body.messages, tools: body.tools });
      return sendJson(response, 200, { input_tokens: Math.max(1, Math.ceil(prompt.length / 4)) });
    }
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
      case 'thinking':
        if (streaming) return sendRecorded(response, thinkingAnswer.sse, 'text/event-stream; charset=utf-8');
        return sendRecorded(response, thinkingAnswer.json, 'application/json');
      case 'overloaded-first':
        return stream(response, model, body, answer, { failAfter: 0 });
      case 'midstream-error':
        return stream(response, model, body, answer, { failAfter: 2, failure: 'error-event', delayMs: 20 });
      case 'midstream-reset':
        return stream(response, model, body, answer, { failAfter: 2, failure: 'reset', delayMs: 20 });
      case 'slow-stream':
        // 50 pieces, 100 ms apart: long enough for disconnect tests.
        return stream(
          response,
          model,
          body,
          { text: Array.from({ length: 50 }, (_, index) => `w${index} `).join('') },
          {
            delayMs: 100,
          },
        );
      default:
        if (streaming) return stream(response, model, body, answer);
        return sendJson(response, 200, message(model, body, answer), { 'request-id': 'req_mock_anthropic' });
    }
  });
  return { url: server.url, baseUrl: `${server.url}/v1`, requests: server.requests, close: server.close };
}
