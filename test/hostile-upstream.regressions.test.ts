import { describe, expect, it } from 'vitest';
import { exchangeWith, logRowsOf, useHostileGateway } from './support/hostile-gateway.js';
import type { ScriptedResponse } from './support/scripted-upstream.js';
import { parseStrictSse } from './support/sse.js';

/**
 * Misbehaving upstream answers that broke the gateway, each found by hostile-upstream.generated.test.ts and kept here
 * as a fixed case (so it stays covered at any run count): the client's status, the error the request is logged with,
 * and for streams how the stream ends.
 */

const hostile = useHostileGateway();

interface Case {
  name: string;
  path: string;
  body: Record<string, unknown>;
  answer: ScriptedResponse;
  /** The client's status. */
  status: number;
  /** The code the request is logged with (undefined: a success). */
  logged?: string;
  /** For a stream: the last event before [DONE] (or the last of a Messages stream), and what its data contains. */
  lastEvent?: { name?: string; contains: string };
  /** For a 2xx JSON answer: members it must have. */
  answerHas?: Record<string, unknown>;
}

const ask = 'What is the weather in Paris?';
const chat = (model: string, stream = false) => ({ model, messages: [{ role: 'user', content: ask }], stream });
const responses = (model: string, stream = false) => ({ model, input: ask, stream, store: false });
const messages = (model: string, stream = false) => ({
  model,
  max_tokens: 100,
  messages: [{ role: 'user', content: ask }],
  stream,
});
const sse = (events: Array<{ event?: string; data: unknown }>): ScriptedResponse => ({
  status: 200,
  headers: { 'content-type': 'text/event-stream' },
  sse: events,
});

async function expectHandled(testCase: Case): Promise<void> {
  const { response, text, requestId } = await exchangeWith(hostile, testCase.path, testCase.body, testCase.answer);
  const context = `${response.status} ${text.slice(0, 800)}`;
  expect(response.status, context).toBe(testCase.status);
  const rows = await logRowsOf(hostile.gateway, requestId);
  expect(rows.length).toBe(1);
  expect(rows[0]?.error_code ?? undefined, context).toBe(testCase.logged);
  if (testCase.lastEvent) {
    const surface =
      testCase.path === '/v1/messages' ? 'messages' : testCase.path === '/v1/responses' ? 'responses' : 'openai';
    const frames = parseStrictSse(text, { surface }).frames.filter((frame) => frame.data !== '[DONE]');
    const last = frames.at(-1);
    if (testCase.lastEvent.name !== undefined) expect(last?.event, context).toBe(testCase.lastEvent.name);
    expect(last?.data, context).toContain(testCase.lastEvent.contains);
  }
  if (testCase.answerHas) expect(JSON.parse(text), context).toMatchObject(testCase.answerHas);
}

describe('a Gemini upstream whose answer has the wrong shape: a 502 naming the field, never a 500', () => {
  const cases: Case[] = [
    {
      name: 'candidates that is a string, on /v1/chat/completions',
      path: '/v1/chat/completions',
      body: chat('hostile-gemini'),
      answer: { status: 200, json: { candidates: 'SAFETY', modelVersion: 'gemini-2.5-flash' } },
      status: 502,
      logged: 'upstream_malformed_response',
    },
    {
      name: 'a part that is null, on /v1/messages (Anthropic’s 500 api_error, logged as the 502 it is)',
      path: '/v1/messages',
      body: messages('hostile-gemini'),
      answer: { status: 200, json: { candidates: [{ content: { parts: [null] }, finishReason: 'STOP' }] } },
      status: 500,
      logged: 'upstream_malformed_response',
    },
    {
      name: 'a stream event whose candidates is a number, on /v1/responses',
      path: '/v1/responses',
      body: responses('hostile-gemini', true),
      answer: sse([{ data: { candidates: 0, modelVersion: 'gemini-2.5-flash' } }]),
      status: 502,
      logged: 'upstream_malformed_response',
    },
  ];
  it.each(cases)('$name', expectHandled);
});

describe('a Gemini error body of the wrong shape: its status, never a 500', () => {
  const cases: Case[] = [
    {
      name: 'a 429 whose details is an object instead of a list',
      path: '/v1/chat/completions',
      body: chat('hostile-gemini'),
      answer: { status: 429, json: { error: { code: 429, message: 'Quota exceeded', details: {} } } },
      status: 429,
      logged: 'rate_limit_exceeded',
    },
    {
      name: 'an error event whose code is no HTTP status',
      path: '/v1/chat/completions',
      body: chat('hostile-gemini', true),
      answer: sse([{ data: { error: { code: 404.5, message: 'Not quite found' } } }]),
      status: 502,
      logged: 'upstream_error',
    },
  ];
  it.each(cases)('$name', expectHandled);
});

describe('an Anthropic answer translated for another surface, of the wrong shape: a 502, never a 500', () => {
  const message = {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: 'claude-sonnet-4-5',
    stop_reason: 'end_turn',
  };
  const cases: Case[] = [
    {
      name: 'a content block that is null, on /v1/responses',
      path: '/v1/responses',
      body: responses('hostile-anthropic'),
      answer: { status: 200, json: { ...message, content: [null] } },
      status: 502,
      logged: 'upstream_malformed_response',
    },
    {
      name: 'an id that is not a string, on /v1/chat/completions',
      path: '/v1/chat/completions',
      body: chat('hostile-anthropic'),
      answer: { status: 200, json: { ...message, id: 42, content: [{ type: 'text', text: 'Hi' }] } },
      status: 502,
      logged: 'upstream_malformed_response',
    },
  ];
  it.each(cases)('$name', expectHandled);
});

describe('an OpenAI-compatible answer of the wrong shape or name', () => {
  const completion = {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1,
    model: 'gpt-4o-mini',
    usage: { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 },
  };
  const toolCall = { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{}' } };
  const withToolCalls = (calls: unknown[]) => ({
    ...completion,
    choices: [
      { index: 0, message: { role: 'assistant', content: null, tool_calls: calls }, finish_reason: 'tool_calls' },
    ],
  });
  const text = { id: 'cmpl-1', created: 1, model: 'gpt-3.5-instruct' };
  const cases: Case[] = [
    {
      name: 'a tool call that is null, as the JSON answer to a stream (streamed by the gateway): a 502',
      path: '/v1/chat/completions',
      body: chat('hostile-openai', true),
      answer: { status: 200, json: withToolCalls([null]) },
      status: 502,
      logged: 'upstream_malformed_response',
    },
    {
      name: 'a tool call whose function is null, on a /v1/responses stream: a 502',
      path: '/v1/responses',
      body: responses('hostile-openai', true),
      answer: { status: 200, json: withToolCalls([{ ...toolCall, function: null }]) },
      status: 502,
      logged: 'upstream_malformed_response',
    },
    {
      name: 'a tool call that is null in a stream chunk: an in-band error',
      path: '/v1/chat/completions',
      body: chat('hostile-openai', true),
      answer: sse([
        { data: { ...completion, object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: 'Hi' } }] } },
        {
          data: {
            ...completion,
            object: 'chat.completion.chunk',
            choices: [{ index: 0, delta: { tool_calls: [null] } }],
          },
        },
      ]),
      status: 200,
      logged: 'upstream_malformed_response',
      lastEvent: { contains: '"code":"upstream_malformed_response"' },
    },
    {
      name: 'a completion whose object is null: named chat.completion for the client',
      path: '/v1/chat/completions',
      body: chat('hostile-openai'),
      answer: {
        status: 200,
        json: { ...completion, object: null, choices: [{ index: 0, message: { role: 'assistant', content: 'Hi' } }] },
      },
      status: 200,
      answerHas: { object: 'chat.completion', choices: [{ message: { content: 'Hi' } }] },
    },
    {
      name: 'stream chunks whose object is a list: named chat.completion.chunk for the client',
      path: '/v1/chat/completions',
      body: chat('hostile-openai', true),
      answer: sse([
        {
          data: { ...completion, object: [], choices: [{ index: 0, delta: { content: 'Hi' }, finish_reason: 'stop' }] },
        },
        { data: '[DONE]' },
      ]),
      status: 200,
      lastEvent: { contains: '"object":"chat.completion.chunk"' },
    },
    {
      name: 'a text completion whose object is false: named text_completion for the client',
      path: '/v1/completions',
      body: { model: 'hostile-openai', prompt: 'Say hi', max_tokens: 5 },
      answer: {
        status: 200,
        json: { ...text, object: false, choices: [{ text: ' hi', index: 0, finish_reason: 'stop' }] },
      },
      status: 200,
      answerHas: { object: 'text_completion', choices: [{ text: ' hi' }] },
    },
    {
      name: 'text completion chunks whose object is missing: named text_completion for the client',
      path: '/v1/completions',
      body: { model: 'hostile-openai', prompt: 'Say hi', max_tokens: 5, stream: true },
      answer: sse([
        { data: { ...text, choices: [{ text: ' hi', index: 0, finish_reason: 'stop' }] } },
        { data: '[DONE]' },
      ]),
      status: 200,
      lastEvent: { contains: '"object":"text_completion"' },
    },
    {
      name: 'an embeddings list whose object is an object: named list for the client',
      path: '/v1/embeddings',
      body: { model: 'hostile-openai-embed', input: 'a' },
      answer: {
        status: 200,
        json: { object: {}, data: [{ object: 'embedding', index: 0, embedding: [0.5] }], model: 'e' },
      },
      status: 200,
      answerHas: { object: 'list', data: [{ object: 'embedding', embedding: [0.5] }] },
    },
  ];
  it.each(cases)('$name', expectHandled);
});

describe('an Anthropic answer passed through to /v1/messages that is not what it claims', () => {
  const start = {
    type: 'message_start',
    message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5', content: [], usage: {} },
  };
  const text = [
    {
      event: 'content_block_start',
      data: { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    },
    {
      event: 'content_block_delta',
      data: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hi' } },
    },
  ];
  const cases: Case[] = [
    {
      name: 'a 201 with an empty body: Anthropic’s 500 api_error, not an empty 200',
      path: '/v1/messages',
      body: messages('hostile-anthropic'),
      answer: { status: 201, text: '' },
      status: 500,
      logged: 'upstream_malformed_response',
    },
    {
      name: 'an event stream answering a JSON request: not relayed as a message',
      path: '/v1/messages',
      body: messages('hostile-anthropic'),
      answer: sse([
        { event: 'message_start', data: start },
        { event: 'message_stop', data: { type: 'message_stop' } },
      ]),
      status: 500,
      logged: 'upstream_malformed_response',
    },
    {
      name: 'an error body with a 200: the error it is',
      path: '/v1/messages',
      body: messages('hostile-anthropic'),
      answer: { status: 200, json: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } },
      status: 529,
      logged: 'upstream_overloaded',
    },
    {
      name: 'a stream event whose type is not its name: an error event, not relayed',
      path: '/v1/messages',
      body: messages('hostile-anthropic', true),
      answer: sse([{ event: 'message_start', data: { ...start, type: null } }, ...text]),
      status: 200,
      logged: 'upstream_malformed_response',
      lastEvent: { name: 'error', contains: 'whose type is null' },
    },
    {
      name: 'a stream event that is not JSON: an error event, not relayed',
      path: '/v1/messages',
      body: messages('hostile-anthropic', true),
      answer: sse([
        { event: 'message_start', data: start },
        ...text,
        { event: 'content_block_delta', data: '{"type":' },
      ]),
      status: 200,
      logged: 'upstream_malformed_response',
      lastEvent: { name: 'error', contains: 'not JSON' },
    },
    {
      name: 'events after message_stop: not relayed, the stream ends with message_stop',
      path: '/v1/messages',
      body: messages('hostile-anthropic', true),
      answer: sse([
        { event: 'message_start', data: start },
        ...text,
        { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
        { event: 'message_stop', data: { type: 'message_stop' } },
        ...text,
      ]),
      status: 200,
      lastEvent: { name: 'message_stop', contains: 'message_stop' },
    },
  ];
  it.each(cases)('$name', expectHandled);
});

describe('a native Responses answer that is not what it claims', () => {
  const created = {
    type: 'response.created',
    sequence_number: 0,
    response: { id: 'resp_1', object: 'response', output: [] },
  };
  const delta = {
    type: 'response.output_text.delta',
    sequence_number: 1,
    item_id: 'msg_1',
    output_index: 0,
    delta: 'Hi',
  };
  const completed = {
    type: 'response.completed',
    sequence_number: 2,
    response: { id: 'resp_1', object: 'response', status: 'completed', output: [] },
  };
  const cases: Case[] = [
    {
      name: 'an error body with a 201: the error, not a 200',
      path: '/v1/responses',
      body: responses('hostile-native'),
      answer: { status: 201, json: { error: { message: 'Boom', type: 'server_error', code: 'boom' } } },
      status: 502,
      logged: 'upstream_error',
    },
    {
      name: 'a JSON body that is no response object: a 502',
      path: '/v1/responses',
      body: responses('hostile-native'),
      answer: { status: 200, json: { object: 'list', data: [] } },
      status: 502,
      logged: 'upstream_malformed_response',
    },
    {
      name: 'a stream event that is not JSON: error and response.failed, not relayed',
      path: '/v1/responses',
      body: responses('hostile-native', true),
      answer: sse([
        { event: 'response.created', data: created },
        { event: 'response.output_text.delta', data: '{"type": not json' },
        { event: 'response.completed', data: completed },
      ]),
      status: 200,
      logged: 'upstream_malformed_response',
      lastEvent: { name: 'response.failed', contains: 'not JSON' },
    },
    {
      name: 'a stream event without an event line: relayed under its type',
      path: '/v1/responses',
      body: responses('hostile-native', true),
      answer: sse([{ event: 'response.created', data: created }, { data: delta }, { data: completed }]),
      status: 200,
      lastEvent: { name: 'response.completed', contains: '"status":"completed"' },
    },
    {
      name: 'events after the terminal event: not relayed',
      path: '/v1/responses',
      body: responses('hostile-native', true),
      answer: sse([
        { event: 'response.created', data: created },
        { event: 'response.completed', data: completed },
        { event: 'response.output_text.delta', data: delta },
      ]),
      status: 200,
      lastEvent: { name: 'response.completed', contains: '"status":"completed"' },
    },
  ];
  it.each(cases)('$name', expectHandled);
});

interface Chunk {
  choices: Array<{ finish_reason: unknown }>;
  usage?: { completion_tokens: number };
}

describe('an OpenAI-compatible upstream refusing a translated Messages request by its chat path', () => {
  it('is relayed naming the client’s Messages field at the start of the message', async () => {
    const param = 'messages[1].content[0].text';
    const { response, text } = await exchangeWith(
      hostile,
      '/v1/messages',
      {
        ...messages('hostile-openai'),
        system: 'be brief',
        messages: [{ role: 'user', content: [{ type: 'text', text: ask }] }],
      },
      {
        status: 400,
        json: { error: { message: `Invalid '${param}': too long.`, type: 'invalid_request_error', param, code: null } },
      },
    );
    expect(response.status, text).toBe(400);
    // The system prompt made the client's first message the chat request's second.
    expect(JSON.parse(text).error.message).toBe('messages.0.content.0.text: too long.');
  });
});

describe('an OpenAI-compatible stream that repeats its end', () => {
  const base = { id: 'cmpl-1', object: 'text_completion', created: 1, model: 'gpt-3.5-instruct' };
  const finish = { data: { ...base, choices: [{ text: '', index: 0, finish_reason: 'length' }] } };

  async function framesOf(path: string, body: Record<string, unknown>, answer: ScriptedResponse) {
    const { response, text } = await exchangeWith(hostile, path, body, answer);
    expect(response.status, text).toBe(200);
    return parseStrictSse(text).frames.flatMap((frame) =>
      frame.data === '[DONE]' ? [] : [JSON.parse(frame.data) as Chunk],
    );
  }

  it('a finish chunk sent twice: the client sees one finish reason', async () => {
    const chunks = await framesOf(
      '/v1/completions',
      { model: 'hostile-openai', prompt: 'Say hi', max_tokens: 5, stream: true },
      sse([
        { data: { ...base, choices: [{ text: ' hi', index: 0, finish_reason: null }] } },
        finish,
        finish,
        { data: '[DONE]' },
      ]),
    );
    expect(chunks.flatMap((chunk) => chunk.choices.map((choice) => choice.finish_reason))).toEqual([
      null,
      'length',
      null,
    ]);
  });

  it('an empty usage ({}) in a JSON answer streamed by the gateway: one usage chunk, the estimate', async () => {
    const completion = {
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 1,
      model: 'gpt-4o-mini',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hi' }, finish_reason: 'stop' }],
      usage: {},
    };
    const chunks = await framesOf(
      '/v1/chat/completions',
      { ...chat('hostile-openai', true), stream_options: { include_usage: true } },
      { status: 200, json: completion },
    );
    const usages = chunks.filter((chunk) => chunk.usage);
    expect(usages).toHaveLength(1);
    expect(usages[0]?.usage?.completion_tokens).toBeGreaterThan(0);
  });
});

describe('an OpenAI-compatible choice without what the SDKs read', () => {
  const completion = { id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'gpt-4o-mini' };
  const chunk = { ...completion, object: 'chat.completion.chunk' };
  const usage = { prompt_tokens: 9, completion_tokens: 1, total_tokens: 10 };

  it('a stream whose [DONE] comes before any finish_reason: each choice seen ends with stop', async () => {
    const { response, text } = await exchangeWith(
      hostile,
      '/v1/chat/completions',
      { ...chat('hostile-openai', true), stream_options: { include_usage: true } },
      sse([
        {
          data: { ...chunk, choices: [{ index: 0, delta: { role: 'assistant', content: 'Hi' }, finish_reason: null }] },
        },
        {
          data: { ...chunk, choices: [{ index: 1, delta: { role: 'assistant', content: 'Yo' }, finish_reason: null }] },
        },
        { data: { ...chunk, choices: [{ index: 1, delta: {}, finish_reason: 'length' }] } },
        { data: '[DONE]' },
      ]),
    );
    expect(response.status, text).toBe(200);
    const chunks = parseStrictSse(text)
      .frames.filter((frame) => frame.data !== '[DONE]')
      .map((frame) => JSON.parse(frame.data));
    const finishes = chunks.flatMap((each) =>
      each.choices.flatMap((choice: { index: number; finish_reason: unknown }) =>
        choice.finish_reason ? [[choice.index, choice.finish_reason]] : [],
      ),
    );
    expect(finishes).toEqual([
      [1, 'length'],
      [0, 'stop'],
    ]);
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { completion_tokens: expect.any(Number) } });
  });

  it('a legacy completions stream whose [DONE] comes before a choice finished: that choice ends with stop', async () => {
    const text = { id: 'cmpl-1', object: 'text_completion', created: 1, model: 'gpt-3.5-turbo-instruct' };
    const { response, text: body } = await exchangeWith(
      hostile,
      '/v1/completions',
      {
        model: 'hostile-openai',
        prompt: ['a', 'b'],
        max_tokens: 5,
        stream: true,
        stream_options: { include_usage: true },
      },
      sse([
        { data: { ...text, choices: [{ text: 'Hi', index: 0, logprobs: null, finish_reason: null }] } },
        { data: { ...text, choices: [{ text: 'Yo', index: 1, logprobs: null, finish_reason: null }] } },
        { data: { ...text, choices: [{ text: '', index: 1, logprobs: null, finish_reason: 'length' }] } },
        { data: '[DONE]' },
      ]),
    );
    expect(response.status, body).toBe(200);
    const chunks = parseStrictSse(body)
      .frames.filter((frame) => frame.data !== '[DONE]')
      .map((frame) => JSON.parse(frame.data));
    const finishes = chunks.flatMap((each) =>
      each.choices.flatMap((choice: { index: number; finish_reason: unknown }) =>
        choice.finish_reason ? [[choice.index, choice.finish_reason]] : [],
      ),
    );
    expect(finishes).toEqual([
      [1, 'length'],
      [0, 'stop'],
    ]);
    // The finish chunk is a text completion chunk like the upstream's, before the usage chunk.
    expect(chunks.at(-2)).toEqual({
      ...text,
      choices: [{ text: '', index: 0, logprobs: null, finish_reason: 'stop' }],
    });
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { completion_tokens: expect.any(Number) } });
  });

  it('a choice without a message (choices: [{}]), usage and all: a 502, never relayed', async () => {
    await expectHandled({
      name: 'choices [{}]',
      path: '/v1/chat/completions',
      body: chat('hostile-openai'),
      answer: { status: 200, json: { ...completion, choices: [{}], usage } },
      status: 502,
      logged: 'upstream_malformed_response',
    });
  });

  it('a choice without index or finish_reason: given its position and the finish its message shows', async () => {
    const calls = [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{}' } }];
    const { response, text } = await exchangeWith(hostile, '/v1/chat/completions', chat('hostile-openai'), {
      status: 200,
      json: {
        ...completion,
        choices: [
          { message: { role: 'assistant', content: 'Hi' } },
          { message: { role: 'assistant', content: null, tool_calls: calls } },
        ],
        usage,
      },
    });
    expect(response.status, text).toBe(200);
    expect(JSON.parse(text).choices).toMatchObject([
      { index: 0, finish_reason: 'stop', message: { content: 'Hi' } },
      { index: 1, finish_reason: 'tool_calls', message: { tool_calls: calls } },
    ]);
  });

  it('an index that is no whole number: a 502', async () => {
    await expectHandled({
      name: 'index 0.5',
      path: '/v1/chat/completions',
      body: chat('hostile-openai'),
      answer: {
        status: 200,
        json: { ...completion, choices: [{ index: 0.5, message: { role: 'assistant', content: 'Hi' } }], usage },
      },
      status: 502,
      logged: 'upstream_malformed_response',
    });
  });

  it('stream chunks whose choices lack delta, index or finish_reason: each choice whole for the client', async () => {
    const { response, text } = await exchangeWith(
      hostile,
      '/v1/chat/completions',
      chat('hostile-openai', true),
      sse([
        { data: { ...chunk, choices: [{ delta: { role: 'assistant', content: 'Hi' } }] } },
        { data: { ...chunk, choices: [{}] } },
        { data: { ...chunk, choices: [{ finish_reason: 'stop' }] } },
        { data: '[DONE]' },
      ]),
    );
    expect(response.status, text).toBe(200);
    const choices = parseStrictSse(text)
      .frames.filter((frame) => frame.data !== '[DONE]')
      .flatMap((frame) => JSON.parse(frame.data).choices);
    expect(choices).toEqual([
      { index: 0, delta: { role: 'assistant', content: 'Hi' }, finish_reason: null },
      { index: 0, delta: {}, finish_reason: null },
      { index: 0, delta: {}, finish_reason: 'stop' },
    ]);
  });
});

describe('usage an upstream reports that cannot be believed: estimated, marked so, and the estimate shown', () => {
  const completion = {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1,
    model: 'gpt-4o-mini',
    choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there' }, finish_reason: 'stop' }],
  };
  const chunk = { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini' };
  const text = { id: 'cmpl-1', object: 'text_completion', created: 1, model: 'gpt-3.5-instruct' };
  const message = {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: 'claude-sonnet-4-5',
    content: [{ type: 'text', text: 'Hello there' }],
    stop_reason: 'end_turn',
  };
  const nativeResponse = { id: 'resp_1', object: 'response', status: 'completed', output: [] };
  const unbelievable = [
    { prompt_tokens: -5, completion_tokens: 3, total_tokens: -2 },
    { prompt_tokens: 9, completion_tokens: 1.5, total_tokens: 10.5 },
    { prompt_tokens: 'NaN', completion_tokens: 3, total_tokens: 3 },
    { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12, prompt_tokens_details: { cached_tokens: -1 } },
  ];

  interface UsageCase {
    name: string;
    path: string;
    body: Record<string, unknown>;
    answer: ScriptedResponse;
    /** The usage objects the client was shown. */
    shown: (text: string) => Array<Record<string, unknown>>;
  }
  const jsonUsage = (text: string) => [JSON.parse(text).usage];
  const streamedUsage = (surface: 'openai' | 'responses' | 'messages') => (text: string) =>
    parseStrictSse(text, { surface })
      .frames.filter((frame) => frame.data !== '[DONE]')
      .map((frame) => JSON.parse(frame.data))
      .flatMap((data) => [data.usage, data.message?.usage, data.response?.usage])
      .filter((usage) => usage !== undefined && usage !== null);

  const cases: UsageCase[] = [
    ...unbelievable.map((usage) => ({
      name: `chat JSON with ${JSON.stringify(usage)}`,
      path: '/v1/chat/completions',
      body: chat('hostile-openai'),
      answer: { status: 200, json: { ...completion, usage } },
      shown: jsonUsage,
    })),
    {
      name: 'a chat stream with a negative prompt_tokens',
      path: '/v1/chat/completions',
      body: { ...chat('hostile-openai', true), stream_options: { include_usage: true } },
      answer: sse([
        { data: { ...chunk, choices: [{ index: 0, delta: { content: 'Hello there' }, finish_reason: 'stop' }] } },
        { data: { ...chunk, choices: [], usage: { prompt_tokens: -3, completion_tokens: 2, total_tokens: -1 } } },
        { data: '[DONE]' },
      ]),
      shown: streamedUsage('openai'),
    },
    {
      name: 'a text completion with a fractional completion_tokens',
      path: '/v1/completions',
      body: { model: 'hostile-openai', prompt: 'Say hi', max_tokens: 5 },
      answer: {
        status: 200,
        json: { ...text, choices: [{ text: ' hi', index: 0, finish_reason: 'stop' }], usage: unbelievable[1] },
      },
      shown: jsonUsage,
    },
    {
      name: 'embeddings with a negative prompt_tokens',
      path: '/v1/embeddings',
      body: { model: 'hostile-openai-embed', input: 'a' },
      answer: {
        status: 200,
        json: {
          object: 'list',
          data: [{ object: 'embedding', index: 0, embedding: [0.5] }],
          model: 'e',
          usage: { prompt_tokens: -2, total_tokens: -2 },
        },
      },
      shown: jsonUsage,
    },
    {
      name: 'Gemini embeddings with a negative promptTokenCount',
      path: '/v1/embeddings',
      body: { model: 'hostile-gemini-embed', input: 'a' },
      answer: { status: 200, json: { embeddings: [{ values: [0.5] }], usageMetadata: { promptTokenCount: -3 } } },
      shown: jsonUsage,
    },
    {
      name: 'a Gemini answer translated for /v1/chat/completions with a fractional candidatesTokenCount',
      path: '/v1/chat/completions',
      body: chat('hostile-gemini'),
      answer: {
        status: 200,
        json: {
          candidates: [{ content: { role: 'model', parts: [{ text: 'Hello there' }] }, finishReason: 'STOP' }],
          usageMetadata: { promptTokenCount: 9, candidatesTokenCount: 2.5, totalTokenCount: 11.5 },
          modelVersion: 'gemini-2.5-flash',
        },
      },
      shown: jsonUsage,
    },
    {
      name: 'an Anthropic message passed through with a negative input_tokens',
      path: '/v1/messages',
      body: messages('hostile-anthropic'),
      answer: { status: 200, json: { ...message, usage: { input_tokens: -10, output_tokens: 2 } } },
      shown: jsonUsage,
    },
    {
      name: 'an Anthropic stream passed through with a negative input_tokens',
      path: '/v1/messages',
      body: messages('hostile-anthropic', true),
      answer: sse([
        {
          event: 'message_start',
          data: { type: 'message_start', message: { ...message, content: [], usage: { input_tokens: -10 } } },
        },
        {
          event: 'content_block_start',
          data: { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
        },
        {
          event: 'content_block_delta',
          data: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hello there' } },
        },
        { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
        {
          event: 'message_delta',
          data: { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 3 } },
        },
        { event: 'message_stop', data: { type: 'message_stop' } },
      ]),
      shown: streamedUsage('messages'),
    },
    {
      name: 'an Anthropic message translated for /v1/chat/completions with a fractional output_tokens',
      path: '/v1/chat/completions',
      body: chat('hostile-anthropic'),
      answer: { status: 200, json: { ...message, usage: { input_tokens: 9, output_tokens: 2.5 } } },
      shown: jsonUsage,
    },
    {
      name: 'a native Responses answer with a negative input_tokens',
      path: '/v1/responses',
      body: responses('hostile-native'),
      answer: {
        status: 200,
        json: { ...nativeResponse, usage: { input_tokens: -10, output_tokens: 3, total_tokens: -7 } },
      },
      shown: jsonUsage,
    },
    {
      name: 'a native Responses stream with a fractional output_tokens',
      path: '/v1/responses',
      body: responses('hostile-native', true),
      answer: sse([
        {
          event: 'response.created',
          data: {
            type: 'response.created',
            sequence_number: 0,
            response: { ...nativeResponse, status: 'in_progress' },
          },
        },
        {
          event: 'response.output_text.delta',
          data: {
            type: 'response.output_text.delta',
            sequence_number: 1,
            item_id: 'msg_1',
            output_index: 0,
            delta: 'Hi',
          },
        },
        {
          event: 'response.completed',
          data: {
            type: 'response.completed',
            sequence_number: 2,
            response: { ...nativeResponse, usage: { input_tokens: 9, output_tokens: 0.5, total_tokens: 9.5 } },
          },
        },
      ]),
      shown: streamedUsage('responses'),
    },
  ];

  it.each(cases)('$name', async (testCase) => {
    const { response, text, requestId } = await exchangeWith(hostile, testCase.path, testCase.body, testCase.answer);
    expect(response.status, text).toBe(200);
    const [row] = await logRowsOf(hostile.gateway, requestId);
    expect(row, text).toMatchObject({ usage_estimated: 1, error_code: null });
    for (const column of ['prompt_tokens', 'completion_tokens', 'cached_tokens', 'reasoning_tokens']) {
      expect(Number.isSafeInteger(row?.[column]) && Number(row?.[column]) >= 0, `${column}: ${row?.[column]}`).toBe(
        true,
      );
    }
    expect(Number(row?.prompt_tokens), text).toBeGreaterThan(0);
    expect(Number(row?.cost_usd)).toBeGreaterThan(0);
    const shown = testCase.shown(text);
    expect(shown.length, text).toBeGreaterThan(0);
    for (const usage of shown) {
      for (const count of countsIn(usage)) {
        expect(Number.isSafeInteger(count) && (count as number) >= 0, `${count} in ${JSON.stringify(usage)}`).toBe(
          true,
        );
      }
    }
  });
});

/** Every value of a usage object, its details' included. */
function countsIn(usage: unknown): unknown[] {
  if (usage === null || typeof usage !== 'object') return [usage];
  return Object.values(usage).flatMap(countsIn);
}

describe('a native Responses stream numbered wrong: the client sees 0, 1, 2, … without gaps or repeats', () => {
  const response = { id: 'resp_1', object: 'response', output: [] };
  const events = (numbers: Array<number | undefined>) => {
    const types = [
      'response.created',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.completed',
    ];
    return types.map((type, position) => {
      const number = numbers[position];
      const data: Record<string, unknown> = { type, ...(number === undefined ? {} : { sequence_number: number }) };
      if (type === 'response.output_text.delta')
        Object.assign(data, { item_id: 'msg_1', output_index: 0, delta: 'Hi' });
      else data.response = { ...response, status: type === 'response.created' ? 'in_progress' : 'completed' };
      return { event: type, data };
    });
  };
  const cases = [
    { name: 'a gap (an event the upstream dropped)', numbers: [0, 1, 3, 4] },
    { name: 'a repeat', numbers: [0, 1, 1, 2] },
    { name: 'going backwards', numbers: [7, 3, 2, 1] },
    { name: 'none at all', numbers: [undefined, undefined, undefined, undefined] },
    { name: 'starting at 5', numbers: [5, 6, 7, 8] },
  ];

  it.each(cases)('$name', async ({ numbers }) => {
    const { response: answer, text } = await exchangeWith(
      hostile,
      '/v1/responses',
      responses('hostile-native', true),
      sse(events(numbers)),
    );
    expect(answer.status, text).toBe(200);
    const frames = parseStrictSse(text, { surface: 'responses' }).frames.filter((frame) => frame.data !== '[DONE]');
    expect(frames.map((frame) => JSON.parse(frame.data).sequence_number)).toEqual([0, 1, 2, 3]);
    expect(frames.map((frame) => frame.event)).toEqual(events(numbers).map((event) => event.event));
  });

  it('a stream cut short after a gap: the gateway’s error and response.failed numbered right after', async () => {
    const cut = events([0, 4, 9, 12]).slice(0, 3);
    const { text } = await exchangeWith(hostile, '/v1/responses', responses('hostile-native', true), sse(cut));
    const frames = parseStrictSse(text, { surface: 'responses' }).frames.filter((frame) => frame.data !== '[DONE]');
    expect(frames.map((frame) => [frame.event, JSON.parse(frame.data).sequence_number])).toEqual([
      ['response.created', 0],
      ['response.output_text.delta', 1],
      ['response.output_text.delta', 2],
      ['error', 3],
      ['response.failed', 4],
    ]);
  });
});
