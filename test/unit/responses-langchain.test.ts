import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { AIMessageChunk } from '@langchain/core/messages';
import { ChatOpenAI } from '@langchain/openai';
import { describe, expect, it } from 'vitest';
import { fromChatCompletion } from '../../src/api/v1/responses/from-chat-completion.js';
import { createResponseObject } from '../../src/api/v1/responses/response-object.js';
import { createResponseStreamTranslator, formatEvents, streamEnd } from '../../src/api/v1/responses/stream-events.js';
import { toChatRequest } from '../../src/api/v1/responses/to-chat-request.js';
import { validateResponsesRequest } from '../../src/api/v1/responses/validate-request.js';
import type { ChatCompletion } from '../../src/openai/types.js';
import { cannedFetch } from '../support/canned-fetch.js';

/** LangChain's ChatOpenAI with useResponsesApi reads the gateway's translated answers, whole and streamed. */

const fixtures = path.resolve(import.meta.dirname, '../fixtures/responses');
const fixture = <T>(name: string): T => JSON.parse(readFileSync(path.join(fixtures, name), 'utf8'));
const request = validateResponsesRequest(fixture('tools-request.json'));
const { toolNames } = toChatRequest(request, []);
const created = () => createResponseObject(request, { id: 'resp_lc', createdAt: 1760000000, model: request.model });

function model(body: string, contentType: string, streaming: boolean) {
  const canned = cannedFetch(body, contentType);
  const chat = new ChatOpenAI({
    model: 'gpt-test',
    apiKey: 'sk-test',
    useResponsesApi: true,
    streaming,
    configuration: { baseURL: 'http://gateway.test/v1', fetch: canned.fetch },
  });
  return { chat, canned };
}

const expectedToolCalls = [
  { name: 'lookup', args: { city: 'Paris' }, id: 'call_weather', type: 'tool_call' },
  { name: 'get_time', args: { tz: 'UTC' }, id: 'call_time', type: 'tool_call' },
];

describe('LangChain ChatOpenAI with useResponsesApi', () => {
  it('reads a whole answer: reasoning, text, tool calls and usage', async () => {
    const completion = fixture<ChatCompletion>('chat-completion-reasoning-tools.json');
    const response = fromChatCompletion(completion, { response: created(), toolNames });
    const { chat, canned } = model(JSON.stringify(response), 'application/json', false);
    const message = await chat.invoke('What is the weather in Paris, and the time in UTC?');
    expect(canned.requests[0]?.url).toBe('http://gateway.test/v1/responses');
    expect(message.content).toEqual([
      { type: 'reasoning', reasoning: 'The user wants weather and time.' },
      { type: 'text', text: 'Let me check both.', annotations: [] },
    ]);
    expect(message.tool_calls).toEqual(expectedToolCalls);
    expect(message.usage_metadata).toMatchObject({ input_tokens: 50, output_tokens: 20, total_tokens: 70 });
  });

  it('reads a stream into the same message', async () => {
    const stream = createResponseStreamTranslator({ response: created(), toolNames });
    const events = stream.start();
    for (const chunk of fixture<ChatCompletion[]>('chat-stream-reasoning-tools.json'))
      events.push(...stream.push(chunk));
    events.push(...stream.finish());
    const { chat } = model(formatEvents(events) + streamEnd, 'text/event-stream', true);
    let message: AIMessageChunk | undefined;
    for await (const chunk of await chat.stream('What is the weather in Paris, and the time in UTC?')) {
      message = message ? message.concat(chunk) : chunk;
    }
    expect(message?.content).toMatchObject([
      { type: 'reasoning', reasoning: 'The user wants weather and time.' },
      { type: 'text', text: 'Let me check both.' },
    ]);
    expect(message?.tool_calls).toEqual(expectedToolCalls);
    expect(message?.usage_metadata).toMatchObject({ input_tokens: 50, output_tokens: 20, total_tokens: 70 });
  });
});
