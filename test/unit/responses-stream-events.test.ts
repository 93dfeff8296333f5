import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createOpenAI } from '@ai-sdk/openai';
import { jsonSchema, streamText, tool } from 'ai';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { createResponseObject } from '../../src/api/v1/responses/response-object.js';
import {
  createResponseStreamTranslator,
  formatEvent,
  formatEvents,
  type ResponseStreamTranslator,
  streamEnd,
} from '../../src/api/v1/responses/stream-events.js';
import { toChatRequest } from '../../src/api/v1/responses/to-chat-request.js';
import type { ResponseEvent } from '../../src/api/v1/responses/types.js';
import { validateResponsesRequest } from '../../src/api/v1/responses/validate-request.js';
import { apiError } from '../../src/errors/api-error.js';
import type { ChatCompletion } from '../../src/openai/types.js';
import { cannedFetch } from '../support/canned-fetch.js';
import { parseStrictSse } from '../support/sse.js';

const fixtures = path.resolve(import.meta.dirname, '../fixtures/responses');
const fixture = <T>(name: string): T => JSON.parse(readFileSync(path.join(fixtures, name), 'utf8'));

function translator(requestBody: unknown): ResponseStreamTranslator {
  const request = validateResponsesRequest(requestBody);
  const { toolNames } = toChatRequest(request, []);
  const response = createResponseObject(request, { id: 'resp_stream', createdAt: 1760000000, model: request.model });
  return createResponseStreamTranslator({ response, toolNames, now: () => 1760000009 });
}

function chunk(delta: Record<string, unknown>, finishReason: string | null = null): ChatCompletion {
  return {
    id: 'chatcmpl-s',
    object: 'chat.completion.chunk',
    created: 1760000000,
    model: 'upstream-model',
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  };
}

/** The whole stream a client would read: every event, then [DONE]. */
function run(requestBody: unknown, chunks: ChatCompletion[], ending: 'finish' | Error = 'finish') {
  const stream = translator(requestBody);
  const events: ResponseEvent[] = [...stream.start()];
  for (const item of chunks) events.push(...stream.push(item));
  events.push(...(ending === 'finish' ? stream.finish() : stream.fail(ending)));
  return { events, text: formatEvents(events) + streamEnd, final: stream.response() };
}

const toolsRequest = fixture<Record<string, unknown>>('tools-request.json');
const toolChunks = fixture<ChatCompletion[]>('chat-stream-reasoning-tools.json');

describe('Responses stream events', () => {
  it("streams a chat upstream's own reasoning, unasked for a summary, as a reasoning_text content part", () => {
    const { events, text, final } = run({ model: 'm', input: 'hi', stream: true }, [
      chunk({ role: 'assistant', reasoning_content: 'Two and ' }),
      chunk({ reasoning_content: 'two.' }),
      chunk({ content: 'It is 4.' }, 'stop'),
    ]);
    expect(events.slice(2, 9).map((event) => event.type)).toEqual([
      'response.output_item.added',
      'response.content_part.added',
      'response.reasoning_text.delta',
      'response.reasoning_text.delta',
      'response.reasoning_text.done',
      'response.content_part.done',
      'response.output_item.done',
    ]);
    expect(events[3]).toMatchObject({ content_index: 0, part: { type: 'reasoning_text', text: '' } });
    expect(events[6]).toMatchObject({ content_index: 0, text: 'Two and two.' });
    const item = { type: 'reasoning', summary: [], content: [{ type: 'reasoning_text', text: 'Two and two.' }] };
    expect(events[8]).toMatchObject({ item });
    expect(final.output[0]).toMatchObject(item);
    // Each delta event is written from its template: the same JSON as the object.
    const { frames } = parseStrictSse(text, { surface: 'responses' });
    for (const frame of frames.filter((entry) => entry.data !== '[DONE]')) {
      expect(frame.event).toBe(JSON.parse(frame.data).type);
    }
    expect(JSON.parse(frames[4]?.data as string)).toEqual(events[4]);
  });

  it('orders events as the specification does, numbering them from 0', () => {
    const { events, final } = run({ ...toolsRequest, stream: true }, toolChunks);
    expect(events.map((event) => `${event.type}${'output_index' in event ? `@${event.output_index}` : ''}`)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added@0',
      'response.reasoning_summary_part.added@0',
      'response.reasoning_summary_text.delta@0',
      'response.reasoning_summary_text.delta@0',
      'response.reasoning_summary_text.done@0',
      'response.reasoning_summary_part.done@0',
      'response.output_item.done@0',
      'response.output_item.added@1',
      'response.content_part.added@1',
      'response.output_text.delta@1',
      'response.output_text.delta@1',
      'response.output_text.done@1',
      'response.content_part.done@1',
      'response.output_item.done@1',
      'response.output_item.added@2',
      'response.function_call_arguments.delta@2',
      'response.output_item.added@3',
      'response.function_call_arguments.delta@3',
      'response.function_call_arguments.delta@2',
      'response.function_call_arguments.done@2',
      'response.output_item.done@2',
      'response.function_call_arguments.done@3',
      'response.output_item.done@3',
      'response.completed',
    ]);
    expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index));
    expect(events[2]).toMatchObject({ item: { type: 'reasoning', status: 'in_progress', summary: [] } });
    expect(events[16]).toMatchObject({
      item: {
        type: 'function_call',
        status: 'in_progress',
        name: 'lookup',
        namespace: 'weather',
        call_id: 'call_weather',
        arguments: '',
      },
    });
    expect(events[21]).toMatchObject({ arguments: '{"city":"Paris"}', name: 'lookup' });
    expect(final).toMatchObject({
      id: 'resp_stream',
      status: 'completed',
      completed_at: 1760000009,
      model: 'upstream-model',
      usage: { input_tokens: 50, input_tokens_details: { cached_tokens: 10 }, output_tokens: 20, total_tokens: 70 },
      output: [
        {
          type: 'reasoning',
          status: 'completed',
          summary: [{ type: 'summary_text', text: 'The user wants weather and time.' }],
        },
        {
          type: 'message',
          status: 'completed',
          content: [{ type: 'output_text', text: 'Let me check both.', annotations: [], logprobs: [] }],
        },
        {
          type: 'function_call',
          status: 'completed',
          name: 'lookup',
          namespace: 'weather',
          arguments: '{"city":"Paris"}',
        },
        {
          type: 'function_call',
          status: 'completed',
          name: 'get_time',
          call_id: 'call_time',
          arguments: '{"tz":"UTC"}',
        },
      ],
    });
    expect(events.at(-1)).toMatchObject({ response: final });
  });

  it('frames each event whole: an event line equal to its type, one data line of JSON, then data: [DONE]', () => {
    const { events, text } = run({ ...toolsRequest, stream: true }, toolChunks);
    const { frames, keepalives } = parseStrictSse(text, { surface: 'responses' });
    expect(keepalives).toBe(0);
    expect(frames.slice(0, -1)).toEqual(events.map((event) => ({ event: event.type, data: JSON.stringify(event) })));
    expect(frames.at(-1)).toEqual({ event: undefined, data: '[DONE]' });
  });

  it('ends incomplete when the upstream stopped at its length limit, the open item incomplete', () => {
    const { events, final } = run({ model: 'm', input: 'x', max_output_tokens: 2, stream: true }, [
      chunk({ role: 'assistant', content: 'Once' }),
      chunk({ content: ' upon' }),
      chunk({}, 'length'),
    ]);
    expect(events.at(-1)?.type).toBe('response.incomplete');
    expect(events.at(-2)).toMatchObject({ type: 'response.output_item.done', item: { status: 'incomplete' } });
    expect(final).toMatchObject({
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
      output: [{ type: 'message', status: 'incomplete', content: [{ type: 'output_text', text: 'Once upon' }] }],
      usage: null,
    });
  });

  it('reports a failure after the start as an error event, then response.failed with the output so far', () => {
    const { events, final } = run(
      { model: 'm', input: 'x', stream: true },
      [chunk({ role: 'assistant', content: 'Half an ans' })],
      apiError('upstream_unreachable', 'The upstream connection was reset.'),
    );
    expect(events.slice(-2)).toEqual([
      {
        type: 'error',
        sequence_number: events.length - 2,
        code: 'upstream_unreachable',
        message: 'The upstream connection was reset.',
        param: null,
      },
      { type: 'response.failed', sequence_number: events.length - 1, response: final },
    ]);
    expect(final).toMatchObject({
      status: 'failed',
      error: { code: 'upstream_unreachable', message: 'The upstream connection was reset.' },
      output: [{ type: 'message', status: 'incomplete', content: [{ type: 'output_text', text: 'Half an ans' }] }],
    });
    // A failure before any chunk still starts the stream, so clients have a response to fail.
    const early = run({ model: 'm', input: 'x', stream: true }, [], new Error('boom'));
    expect(early.events.map((event) => event.type)).toEqual([
      'response.created',
      'response.in_progress',
      'error',
      'response.failed',
    ]);
    expect(early.final.error).toEqual({
      code: 'server_error',
      message: 'The server had an error while processing your request. Sorry about that!',
    });
  });

  it('streams refusals and text logprobs, and gives a tool call without id one', () => {
    const logprob = { token: 'No', logprob: -0.2, bytes: [78, 111], top_logprobs: [] };
    const { events, final } = run({ model: 'm', input: 'x', stream: true }, [
      {
        ...chunk({ content: 'No' }),
        choices: [{ index: 0, delta: { content: 'No' }, logprobs: { content: [logprob] }, finish_reason: null }],
      },
      chunk({ refusal: "I can't help" }),
      chunk({ tool_calls: [{ index: 0, function: { name: 'f', arguments: '{}' } }] }),
      chunk({}, 'stop'),
    ]);
    expect(events.find((event) => event.type === 'response.output_text.delta')).toMatchObject({ logprobs: [logprob] });
    // Deltas are written from a template: the same bytes as serializing the event.
    for (const event of events)
      expect(formatEvent(event)).toBe(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
    expect(events.filter((event) => event.type.startsWith('response.refusal')).map((event) => event.type)).toEqual([
      'response.refusal.delta',
      'response.refusal.done',
    ]);
    expect(final.output).toMatchObject([
      {
        type: 'message',
        content: [
          { type: 'output_text', text: 'No', logprobs: [logprob] },
          { type: 'refusal', refusal: "I can't help" },
        ],
      },
      { type: 'function_call', name: 'f', call_id: expect.stringMatching(/^call_/) },
    ]);
  });

  it('is read by the openai SDK: events in order, and the final response equal to the one stored', async () => {
    const { text, final } = run({ ...toolsRequest, stream: true }, toolChunks);
    const canned = cannedFetch(text, 'text/event-stream');
    const client = new OpenAI({ apiKey: 'sk-test', baseURL: 'http://gateway.test/v1', fetch: canned.fetch });
    const stream = client.responses.stream({ model: 'gpt-test', input: 'x' });
    const deltas: string[] = [];
    stream.on('response.output_text.delta', (event) => deltas.push(event.delta));
    const response = await stream.finalResponse();
    expect(deltas.join('')).toBe('Let me check both.');
    expect(response.output_text).toBe('Let me check both.');
    // The SDK adds its own fields (output_text, parsed…); everything the gateway sent is what it rebuilt.
    expect(response).toMatchObject(JSON.parse(JSON.stringify(final)));

    const raw = await client.responses.create({ model: 'gpt-test', input: 'x', stream: true });
    const types: string[] = [];
    for await (const event of raw) types.push(event.type);
    expect(types.at(-1)).toBe('response.completed');
  });

  it('lets the openai SDK see a mid-stream failure as error and response.failed events', async () => {
    const { text } = run(
      { model: 'm', input: 'x', stream: true },
      [chunk({ content: 'Half' })],
      apiError('upstream_unreachable', 'reset'),
    );
    const client = new OpenAI({
      apiKey: 'sk-test',
      baseURL: 'http://gateway.test/v1',
      fetch: cannedFetch(text, 'text/event-stream').fetch,
    });
    const raw = await client.responses.create({ model: 'm', input: 'x', stream: true });
    const seen: Array<{ type: string; status?: string }> = [];
    for await (const event of raw) {
      seen.push(
        event.type === 'response.failed' ? { type: event.type, status: event.response.status } : { type: event.type },
      );
    }
    expect(seen.slice(-2)).toEqual([{ type: 'error' }, { type: 'response.failed', status: 'failed' }]);
  });

  it('lets the AI SDK see a mid-stream failure as an error, not as a clean end', async () => {
    const { text } = run(
      { model: 'm', input: 'x', stream: true },
      [chunk({ content: 'Half' })],
      apiError('upstream_unreachable', 'reset'),
    );
    const provider = createOpenAI({
      apiKey: 'sk-test',
      baseURL: 'http://gateway.test/v1',
      fetch: cannedFetch(text, 'text/event-stream').fetch,
    });
    const errors: unknown[] = [];
    const result = streamText({
      model: provider('m'),
      prompt: 'x',
      onError: ({ error }) => {
        errors.push(error);
      },
    });
    expect(await result.text).toBe('Half');
    expect(await result.finishReason).toBe('error');
    expect(errors).toHaveLength(1);
  });

  it('is read by the AI SDK (streamText with openai(model)): text, reasoning, tool calls, usage', async () => {
    const { text } = run({ ...toolsRequest, stream: true }, toolChunks);
    const canned = cannedFetch(text, 'text/event-stream');
    const provider = createOpenAI({ apiKey: 'sk-test', baseURL: 'http://gateway.test/v1', fetch: canned.fetch });
    const parameters = (name: string) =>
      jsonSchema<Record<string, string>>({ type: 'object', properties: { [name]: { type: 'string' } } });
    const errors: unknown[] = [];
    const result = streamText({
      model: provider('gpt-test'),
      prompt: 'What is the weather in Paris, and the time in UTC?',
      tools: { lookup: tool({ inputSchema: parameters('city') }), get_time: tool({ inputSchema: parameters('tz') }) },
      onError: ({ error }) => {
        errors.push(error);
      },
    });
    expect(await result.text).toBe('Let me check both.');
    expect(await result.reasoningText).toBe('The user wants weather and time.');
    expect((await result.toolCalls).map((call) => [call.toolName, call.input])).toEqual([
      ['lookup', { city: 'Paris' }],
      ['get_time', { tz: 'UTC' }],
    ]);
    expect(await result.finishReason).toBe('tool-calls');
    expect(await result.usage).toMatchObject({ inputTokens: 50, outputTokens: 20 });
    expect(errors).toEqual([]);
    expect(canned.requests[0]?.url).toBe('http://gateway.test/v1/responses');
  });
});
