import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { exchangeWith, logRowsOf, useHostileGateway } from './support/hostile-gateway.js';
import { type Mutation, mutate } from './support/json-mutation.js';
import type { ScriptedEvent, ScriptedResponse } from './support/scripted-upstream.js';
import { parseStrictSse, type SseSurface } from './support/sse.js';

/**
 * Generated misbehaving upstreams, per provider type and every client endpoint that reaches it: a valid answer in the
 * provider's wire format (the conformance transcripts' and the native Responses fixtures', JSON or SSE) with values
 * replaced, deleted or added, events dropped, repeated, swapped, cut or made unreadable, an error event mid-stream,
 * the connection reset, any status code with any body, a wrong content type, a body cut short. Whatever comes back
 * from upstream, the client gets a 2xx of its surface's shape, a well-formed stream that ends with its last event, or
 * the surface's error body with a status the gateway documents for upstream faults (never a 500 of its own), and
 * every request gets exactly one log row. `FUZZ_RUNS=2000` hunts longer.
 */

// Per client endpoint and provider (13 of them): about 15 s in all on an idle machine.
const runs = Number(process.env.FUZZ_RUNS ?? 25);
// A long hunt gets the time it needs: an exchange takes a few milliseconds, 200 allows for a busy machine.
const timeoutMs = Math.max(30_000, runs * 200);

type WireFormat = 'openai' | 'anthropic' | 'gemini';
type Surface = 'openai' | 'anthropic';

const conformance = path.join(import.meta.dirname, 'fixtures', 'conformance');
const responsesFixtures = path.join(import.meta.dirname, 'fixtures', 'responses');

/** Every upstream answer of a provider's conformance transcripts: successes, errors, streams, broken streams. */
function transcriptAnswers(provider: WireFormat): ScriptedResponse[] {
  const folder = path.join(conformance, provider);
  return readdirSync(folder)
    .filter((file) => file.endsWith('.json') && file !== 'provider.json')
    .sort()
    .map((file) => JSON.parse(readFileSync(path.join(folder, file), 'utf8')).upstream.response);
}

/** An SSE file as scripted events. */
function eventsOf(text: string): ScriptedEvent[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const lines = block.split('\n');
      const event = lines.find((line) => line.startsWith('event: '))?.slice('event: '.length);
      const data = lines.find((line) => line.startsWith('data: '))?.slice('data: '.length) ?? '';
      return { ...(event === undefined ? {} : { event }), data: data === '[DONE]' ? data : JSON.parse(data) };
    });
}

const sseHeaders = { 'content-type': 'text/event-stream; charset=utf-8' };

const nativeResponses: ScriptedResponse[] = [
  { status: 200, json: JSON.parse(readFileSync(path.join(responsesFixtures, 'native-response.json'), 'utf8')) },
  {
    status: 200,
    headers: sseHeaders,
    sse: eventsOf(readFileSync(path.join(responsesFixtures, 'native-stream.sse'), 'utf8')),
  },
];

// OpenAI's legacy completions, as the OpenAI mock answers them (mock-openai-text-completions.ts).
const textCompletion = { id: 'cmpl-1', object: 'text_completion', created: 1_700_000_000, model: 'gpt-3.5-instruct' };
const textCompletions: ScriptedResponse[] = [
  {
    status: 200,
    json: {
      ...textCompletion,
      choices: [{ text: ' there', index: 0, logprobs: null, finish_reason: 'stop' }],
      usage: { prompt_tokens: 2, completion_tokens: 1, total_tokens: 3 },
    },
  },
  {
    status: 200,
    headers: sseHeaders,
    sse: [
      { data: { ...textCompletion, choices: [{ text: ' there', index: 0, logprobs: null, finish_reason: null }] } },
      { data: { ...textCompletion, choices: [{ text: '', index: 0, logprobs: null, finish_reason: 'length' }] } },
      { data: { ...textCompletion, choices: [], usage: { prompt_tokens: 2, completion_tokens: 1, total_tokens: 3 } } },
      { data: '[DONE]' },
    ],
  },
];

const openAiEmbeddings: ScriptedResponse[] = [
  {
    status: 200,
    json: {
      object: 'list',
      data: [
        { object: 'embedding', index: 0, embedding: [0.25, -0.5, 0.125] },
        { object: 'embedding', index: 1, embedding: [0.5, 0.75, -1] },
      ],
      model: 'text-embedding-3-small',
      usage: { prompt_tokens: 2, total_tokens: 2 },
    },
  },
];

const geminiEmbeddings: ScriptedResponse[] = [
  { status: 200, json: { embeddings: [{ values: [0.25, -0.5, 0.125] }, { values: [0.5, 0.75, -1] }] } },
];

// An error event as each provider sends it in a stream.
const errorEvents: Record<WireFormat | 'responses', ScriptedEvent> = {
  openai: { data: { error: { message: 'The server had an error', type: 'server_error', param: null, code: null } } },
  anthropic: { event: 'error', data: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } },
  gemini: { data: { error: { code: 500, message: 'Internal error encountered.', status: 'INTERNAL' } } },
  responses: {
    event: 'error',
    data: { type: 'error', sequence_number: 3, code: 'server_error', message: 'The model crashed', param: null },
  },
};

interface Case {
  name: string;
  /** The public model, whose provider is the scripted upstream. */
  model: string;
  wire: WireFormat | 'responses';
  endpoint: 'chat' | 'responses' | 'messages' | 'completions' | 'embeddings';
  answers: ScriptedResponse[];
}

const chatEndpoints = ['chat', 'responses', 'messages'] as const;
const cases: Case[] = [
  ...(['openai', 'anthropic', 'gemini'] as const).flatMap((wire) =>
    chatEndpoints.map((endpoint) => ({
      name: `${wire} upstream, /v1/${endpoint}`,
      model: `hostile-${wire}`,
      wire,
      endpoint,
      answers: transcriptAnswers(wire),
    })),
  ),
  {
    name: 'openai upstream (native Responses), /v1/responses',
    model: 'hostile-native',
    wire: 'responses',
    endpoint: 'responses',
    answers: nativeResponses,
  },
  {
    name: 'openai upstream, /v1/completions',
    model: 'hostile-openai',
    wire: 'openai',
    endpoint: 'completions',
    answers: textCompletions,
  },
  {
    name: 'openai upstream, /v1/embeddings',
    model: 'hostile-openai-embed',
    wire: 'openai',
    endpoint: 'embeddings',
    answers: openAiEmbeddings,
  },
  {
    name: 'gemini upstream, /v1/embeddings',
    model: 'hostile-gemini-embed',
    wire: 'gemini',
    endpoint: 'embeddings',
    answers: geminiEmbeddings,
  },
];

const weatherParameters = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };

/** The client's (valid) request: what each endpoint's clients send, streamed or not. */
function requestFor(endpoint: Case['endpoint'], model: string, stream: boolean): { path: string; body: unknown } {
  const question = 'What is the weather in Paris?';
  switch (endpoint) {
    case 'chat':
      return {
        path: '/v1/chat/completions',
        body: {
          model,
          messages: [{ role: 'user', content: question }],
          tools: [{ type: 'function', function: { name: 'get_weather', parameters: weatherParameters } }],
          stream,
          ...(stream ? { stream_options: { include_usage: true } } : {}),
        },
      };
    case 'responses':
      return {
        path: '/v1/responses',
        body: {
          model,
          input: question,
          tools: [{ type: 'function', name: 'get_weather', parameters: weatherParameters }],
          stream,
          store: false,
        },
      };
    case 'messages':
      return {
        path: '/v1/messages',
        body: {
          model,
          max_tokens: 200,
          messages: [{ role: 'user', content: question }],
          tools: [{ name: 'get_weather', input_schema: weatherParameters }],
          stream,
        },
      };
    case 'completions':
      return { path: '/v1/completions', body: { model, prompt: 'Say hi', max_tokens: 16, stream } };
    case 'embeddings':
      return {
        path: '/v1/embeddings',
        body: { model, input: ['a', 'b'], encoding_format: stream ? 'base64' : 'float' },
      };
  }
}

// What a misbehaving upstream puts where a value belongs.
const hostileValue = fc.oneof(
  fc.constantFrom(
    null,
    '',
    'x'.repeat(20_000),
    -1,
    0,
    -0.5,
    'NaN',
    '12',
    -1e308,
    1e308,
    2 ** 53 + 1,
    1.5,
    true,
    [],
    {},
    [null],
    'unknown_value',
    'tool_calls',
    'tool_use',
    'length',
    'max_tokens',
    'MAX_TOKENS',
    'SAFETY',
    'system',
    'function',
    'thinking',
    'redacted_thinking',
    'server_tool_use',
    '{"city":',
    'not json',
    '\u0000',
    '\ud800',
  ),
  fc.jsonValue({ maxDepth: 2 }),
);

const mutation: fc.Arbitrary<Mutation> = fc.record({
  kind: fc.constantFrom('replace', 'replace', 'delete', 'add'),
  at: fc.nat(),
  value: hostileValue,
});

const statuses = fc.constantFrom(201, 202, 203, 204, 206, 301, 302, 304, 307, 400, 401, 402, 403, 404, 405, 408, 409);
const moreStatuses = fc.constantFrom(413, 418, 422, 429, 451, 500, 501, 502, 503, 504, 520, 529, 599);
const errorBodies = fc.oneof(
  fc.record({ json: fc.jsonValue({ maxDepth: 3 }) }),
  fc.constantFrom<Partial<ScriptedResponse>>(
    { text: '' },
    { text: '<html><body><h1>502 Bad Gateway</h1></body></html>', headers: { 'content-type': 'text/html' } },
    { text: 'upstream connect error or disconnect/reset before headers' },
    { json: { error: { message: 'Boom', type: 'server_error', code: 'boom' } } },
    { json: { type: 'error', error: { type: 'api_error', message: 'Internal server error' } } },
    { json: { error: { code: 500, message: 'Internal error', status: 'INTERNAL' } } },
    { json: [{ error: { code: 503, message: 'The model is overloaded.', status: 'UNAVAILABLE' } }] },
    { json: { error: 'a string' } },
    { json: { error: { message: null, type: 42 } } },
  ),
);

/** One thing an upstream does wrong; several may pile up on one answer. */
type Fault =
  | { kind: 'edit'; event: number; mutation: Mutation }
  | { kind: 'drop' | 'duplicate' | 'not-json' | 'error-event' | 'cut-event'; event: number }
  | { kind: 'swap'; event: number; other: number }
  | { kind: 'truncate'; event: number }
  | { kind: 'reset' }
  | { kind: 'status'; status: number; body: Partial<ScriptedResponse> }
  | { kind: 'content-type'; value: string }
  | { kind: 'cut-body'; at: number }
  | { kind: 'no-content-length' };

const fault: fc.Arbitrary<Fault> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('edit' as const), event: fc.nat(), mutation }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constantFrom('drop' as const, 'duplicate' as const, 'not-json' as const, 'error-event' as const),
      event: fc.nat(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('cut-event' as const), event: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('swap' as const), event: fc.nat(), other: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('truncate' as const), event: fc.nat() }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'reset' as const }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('status' as const),
      status: fc.oneof(statuses, moreStatuses),
      body: errorBodies,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('content-type' as const),
      value: fc.constantFrom(
        'text/html',
        'text/plain',
        'application/json',
        'text/event-stream',
        'application/octet-stream',
      ),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('cut-body' as const), at: fc.nat({ max: 400 }) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'no-content-length' as const }) },
);

function serialized(event: ScriptedEvent, lineEnding: string): string {
  if ('raw' in event) return event.raw;
  const data = typeof event.data === 'string' ? event.data : JSON.stringify(event.data);
  return `${event.event === undefined ? '' : `event: ${event.event}${lineEnding}`}data: ${data}${lineEnding}${lineEnding}`;
}

/** The answer with one fault applied. */
function applyFault(answer: ScriptedResponse, wire: Case['wire'], change: Fault): ScriptedResponse {
  const next: ScriptedResponse = structuredClone(answer);
  const events = next.sse;
  const at = (index: number) => (events && events.length > 0 ? index % events.length : 0);
  switch (change.kind) {
    case 'edit': {
      if (events && events.length > 0) {
        const event = events[at(change.event)] as ScriptedEvent;
        if (!('raw' in event) && typeof event.data === 'object') {
          events[at(change.event)] = { ...event, data: mutate(event.data, change.mutation) };
        }
      } else if (next.json !== undefined) next.json = mutate(next.json, change.mutation);
      return next;
    }
    case 'drop':
      events?.splice(at(change.event), 1);
      return next;
    case 'duplicate':
      if (events && events.length > 0) events.splice(at(change.event), 0, events[at(change.event)] as ScriptedEvent);
      return next;
    case 'not-json':
      events?.splice(at(change.event), 0, { data: '{"choices": [ {"delta": not json' });
      return next;
    case 'error-event':
      events?.splice(at(change.event), 0, errorEvents[wire]);
      return next;
    case 'cut-event':
      // Half an event, then the rest of the stream: the two run together into one unreadable event.
      if (events && events.length > 0) {
        const text = serialized(events[at(change.event)] as ScriptedEvent, next.lineEnding ?? '\n');
        events[at(change.event)] = { raw: text.slice(0, Math.max(1, Math.floor(text.length / 2))) };
      }
      return next;
    case 'swap':
      if (events && events.length > 1) {
        const first = events[at(change.event)] as ScriptedEvent;
        events[at(change.event)] = events[at(change.other)] as ScriptedEvent;
        events[at(change.other)] = first;
      }
      return next;
    case 'truncate':
      // The stream stops after an event, its terminal event never sent.
      events?.splice(at(change.event) + 1);
      return next;
    case 'reset':
      if (events) next.end = 'reset';
      else next.cutAt = 0;
      return next;
    case 'status': {
      // A new body with headers of its own: the answer's content type would not describe it.
      const { sse: _events, json: _json, text: _text, headers: _headers, ...rest } = next;
      return { ...rest, status: change.status, ...structuredClone(change.body) };
    }
    case 'content-type':
      next.headers = { ...next.headers, 'content-type': change.value };
      return next;
    case 'cut-body':
      if (!events) next.cutAt = change.at;
      else {
        next.end = 'reset';
        next.sse = events.slice(0, at(change.at) + 1);
      }
      return next;
    case 'no-content-length':
      next.noContentLength = true;
      return next;
  }
}

const hostile = useHostileGateway();

afterAll(async () => {
  expect((await fetch(`${hostile.gateway.url}/healthz`)).status).toBe(200);
});

const seenStatuses = new Map<number, number>();
afterAll(() => console.log(JSON.stringify([...seenStatuses].sort(([a], [b]) => a - b))));

/** Statuses the gateway documents for upstream faults (docs/api.md, Errors), per surface. */
const upstreamFaultStatuses: Record<Surface, readonly number[]> = {
  openai: [502, 503, 504],
  // Anthropic's own statuses for them (error-codes.ts, anthropicByStatus): 502 is its 500 api_error, 503 its 529.
  anthropic: [500, 504, 529],
};

const sseSurfaces: Record<Case['endpoint'], SseSurface> = {
  chat: 'openai',
  completions: 'openai',
  embeddings: 'openai',
  responses: 'responses',
  messages: 'messages',
};

const terminalEvents: Record<Exclude<SseSurface, 'openai'>, RegExp> = {
  responses: /^response\.(completed|incomplete|failed)$/,
  messages: /^(message_stop|error)$/,
};

/** The top-level shape every client of the surface reads from a 2xx JSON answer. */
// biome-ignore lint/suspicious/noExplicitAny: the answer is checked field by field
function expectAnswerShape(endpoint: Case['endpoint'], body: any, context: string): void {
  expect(body !== null && typeof body === 'object' && !Array.isArray(body), context).toBe(true);
  switch (endpoint) {
    case 'chat':
      expect(body.object, context).toBe('chat.completion');
      expect(Array.isArray(body.choices), context).toBe(true);
      return;
    case 'completions':
      expect(body.object, context).toBe('text_completion');
      expect(Array.isArray(body.choices), context).toBe(true);
      return;
    case 'embeddings':
      expect(body.object, context).toBe('list');
      expect(Array.isArray(body.data), context).toBe(true);
      return;
    case 'responses':
      expect(body.object, context).toBe('response');
      expect(Array.isArray(body.output), context).toBe(true);
      return;
    case 'messages':
      expect(body.type, context).toBe('message');
      expect(Array.isArray(body.content), context).toBe(true);
      return;
  }
}

/** The JSON of a body, or a failure that shows the exchange. */
// biome-ignore lint/suspicious/noExplicitAny: bodies are checked field by field
function parsed(text: string, context: string): any {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new Error(`not JSON (${String(error)})\n${context}`);
  }
}

function expectErrorBody(surface: Surface, text: string, context: string): void {
  const body = parsed(text, context);
  if (surface === 'openai') {
    expect(Object.keys(body), context).toEqual(['error']);
    expect(Object.keys(body.error).sort(), context).toEqual(['code', 'message', 'param', 'type']);
    expect(typeof body.error.message, context).toBe('string');
    expect(typeof body.error.type, context).toBe('string');
    return;
  }
  expect(body.type, context).toBe('error');
  expect(Object.keys(body.error).sort(), context).toEqual(['message', 'type']);
  expect(typeof body.error.type, context).toBe('string');
  expect(typeof body.error.message, context).toBe('string');
}

/** Exactly one log row for the request, once the batched writer has written it; its counts whole, never negative. */
async function expectOneLogRow(requestId: string, context: string) {
  const rows = await logRowsOf(hostile.gateway, requestId);
  expect(rows.length, context).toBe(1);
  const row = rows[0] as Record<string, unknown>;
  for (const column of ['prompt_tokens', 'completion_tokens', 'cached_tokens', 'reasoning_tokens', 'cost_usd']) {
    const value = row[column];
    if (value !== null && value !== undefined) {
      const whole = column === 'cost_usd' || Number.isSafeInteger(Number(value));
      expect(whole && Number.isFinite(Number(value)) && Number(value) >= 0, `${context}\n${column}: ${value}`).toBe(
        true,
      );
    }
  }
  return row;
}

/**
 * Usage as the client is shown it: every count (a member named `…tokens`, details included) a whole number, never
 * negative. Members the gateway does not know pass through as they came.
 */
function expectBelievableUsage(usage: unknown, context: string): void {
  if (usage === null || typeof usage !== 'object') return;
  for (const [name, value] of Object.entries(usage)) {
    if (name.endsWith('_details')) expectBelievableUsage(value, context);
    else if (name.endsWith('tokens') && value !== null) {
      expect(Number.isSafeInteger(value) && value >= 0, `${context}\nusage ${name}: ${value}`).toBe(true);
    }
  }
}

/** What the SDKs read of every choice: a whole-number index, and the message (or a stream's delta) as an object. */
// biome-ignore lint/suspicious/noExplicitAny: the choices are checked field by field
function expectReadableChoices(choices: any[], part: 'message' | 'delta' | 'text', context: string): void {
  for (const choice of choices) {
    expect(Number.isSafeInteger(choice.index) && choice.index >= 0, `${context}\nchoice index ${choice.index}`).toBe(
      true,
    );
    if (part !== 'text') expect(typeof choice[part] === 'object' && choice[part] !== null, context).toBe(true);
    expect('finish_reason' in choice, `${context}\na choice without finish_reason`).toBe(true);
  }
}

async function exchange(testCase: Case, answer: ScriptedResponse, stream: boolean): Promise<void> {
  const surface: Surface = testCase.endpoint === 'messages' ? 'anthropic' : 'openai';
  const request = requestFor(testCase.endpoint, testCase.model, stream);
  const { gateway, upstream } = hostile;
  const before = upstream.requests.length;
  const linesBefore = gateway.logLines.length;
  const { response, text, requestId } = await exchangeWith(hostile, request.path, request.body, answer);
  seenStatuses.set(response.status, (seenStatuses.get(response.status) ?? 0) + 1);
  // The row is written once the request is over, after any crash was logged: the context can name the crash.
  const row = await expectOneLogRow(requestId, `${JSON.stringify(answer).slice(0, 1500)}\n-> ${response.status}`);
  const crashes = gateway.logLines.slice(linesBefore).filter((line) => line.includes('unexpected error'));
  const context = `${JSON.stringify(answer).slice(0, 1500)}\n-> ${response.status} ${text.slice(0, 1500)}\n${crashes.join('\n').slice(0, 3000)}`;
  expect(crashes, context).toEqual([]);
  // A crash is a 500 however it reached the client (an HTTP error, an in-band stream error): the row has the status.
  expect(row.status, context).not.toBe(500);
  expect(upstream.requests.length - before, `one upstream request\n${context}`).toBe(1);
  expect(requestId, context).toMatch(/^req_/);

  if (response.status >= 300) {
    expect(response.status < 500 || upstreamFaultStatuses[surface].includes(response.status), context).toBe(true);
    expect(response.headers.get('content-type'), context).toMatch(/^application\/json/);
    expectErrorBody(surface, text, context);
    return;
  }
  // A client that asked for a stream gets one (an upstream's JSON answer is streamed by the gateway), the others JSON
  // (an upstream's stream is not passed off as a JSON answer); embeddings never stream.
  const isStream = response.headers.get('content-type')?.startsWith('text/event-stream') === true;
  expect(isStream, context).toBe(stream && testCase.endpoint !== 'embeddings');
  if (!isStream) {
    expect(response.headers.get('content-type'), context).toMatch(/^application\/json/);
    const answer = parsed(text, context);
    expectAnswerShape(testCase.endpoint, answer, context);
    expectBelievableUsage(answer.usage, context);
    if (testCase.endpoint === 'chat') expectReadableChoices(answer.choices, 'message', context);
    if (testCase.endpoint === 'completions') expectReadableChoices(answer.choices, 'text', context);
    return;
  }
  const sseSurface = sseSurfaces[testCase.endpoint];
  const { frames } = parseStrictSse(text, { surface: sseSurface });
  if (sseSurface !== 'openai') {
    // Responses and Messages end with their terminal event (Responses' [DONE] after it), a failure's included.
    const events = frames.filter((frame) => frame.data !== '[DONE]');
    for (const [position, event] of events.entries()) {
      const data = parsed(event.data, context);
      expectBelievableUsage(data.usage ?? data.message?.usage ?? data.response?.usage, context);
      // Responses events are numbered 0, 1, 2, … whatever the upstream numbered (dropped, repeated or swapped events).
      if (sseSurface === 'responses') expect(data.sequence_number, `${context}\nevent ${position}`).toBe(position);
    }
    expect(events.at(-1)?.event ?? '', context).toMatch(terminalEvents[sseSurface]);
    // One end only: no terminal event before the last one.
    const ends = events.filter((frame) => terminalEvents[sseSurface].test(frame.event ?? ''));
    expect(ends.length, context).toBe(1);
    return;
  }
  // Chunks of the endpoint's kind, or a failure after the start as one in-band error; [DONE] last (strictly parsed).
  const chunkObject = testCase.endpoint === 'chat' ? 'chat.completion.chunk' : 'text_completion';
  const finished = new Set<unknown>();
  let usageChunks = 0;
  for (const frame of frames.slice(0, -1)) {
    const chunk = parsed(frame.data, context);
    if (chunk.error !== undefined) {
      expectErrorBody('openai', frame.data, context);
      continue;
    }
    expect(chunk.object, context).toBe(chunkObject);
    if (chunk.usage) usageChunks++;
    expectBelievableUsage(chunk.usage, context);
    expectReadableChoices(chunk.choices, testCase.endpoint === 'chat' ? 'delta' : 'text', context);
    // A choice finishes once: a client that sees two finish reasons reads two answers.
    for (const choice of chunk.choices) {
      if (!choice.finish_reason) continue;
      expect(finished.has(choice.index), `${context}\ntwo finish reasons for choice ${choice.index}`).toBe(false);
      finished.add(choice.index);
    }
  }
  expect(usageChunks, `${context}\nmore than one usage chunk`).toBeLessThanOrEqual(1);
  // A stream that ended well finished every choice it started (the openai package's chat stream helper needs it;
  // legacy completion clients count one finish per prompt).
  if (!frames.some((frame) => frame.data.startsWith('{"error"'))) {
    for (const frame of frames.slice(0, -1)) {
      for (const choice of parsed(frame.data, context).choices) {
        expect(finished.has(choice.index), `${context}\nchoice ${choice.index} never finished`).toBe(true);
      }
    }
  }
}

describe.each(cases)('a misbehaving upstream: $name', (testCase) => {
  it(
    'answers every hostile upstream answer with its surface shape, a documented status and one log row',
    async () => {
      const answer = fc
        .tuple(fc.constantFrom(...testCase.answers), fc.array(fault, { minLength: 0, maxLength: 3 }))
        .map(([base, faults]) => faults.reduce((current, change) => applyFault(current, testCase.wire, change), base));
      await fc.assert(
        fc.asyncProperty(answer, fc.boolean(), async (scripted, stream) => {
          await exchange(testCase, scripted, stream);
        }),
        { numRuns: runs },
      );
    },
    timeoutMs,
  );
});
