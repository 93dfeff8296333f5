import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, jsonSchema, tool } from 'ai';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { fromChatCompletion } from '../../src/api/v1/responses/from-chat-completion.js';
import { createResponseObject } from '../../src/api/v1/responses/response-object.js';
import { toChatRequest } from '../../src/api/v1/responses/to-chat-request.js';
import type { ResponseObject } from '../../src/api/v1/responses/types.js';
import { validateResponsesRequest } from '../../src/api/v1/responses/validate-request.js';
import type { ChatCompletion } from '../../src/openai/types.js';
import { cannedFetch } from '../support/canned-fetch.js';

const fixtures = path.resolve(import.meta.dirname, '../fixtures/responses');
const fixture = (name: string): unknown => JSON.parse(readFileSync(path.join(fixtures, name), 'utf8'));

/** The fields the Open Responses schema requires of a response (openresponses:src/generated/kubb/zod/responseResourceSchema.ts). */
const requiredFields = [
  'id',
  'object',
  'created_at',
  'completed_at',
  'status',
  'incomplete_details',
  'model',
  'previous_response_id',
  'instructions',
  'output',
  'error',
  'tools',
  'tool_choice',
  'truncation',
  'parallel_tool_calls',
  'text',
  'top_p',
  'presence_penalty',
  'frequency_penalty',
  'top_logprobs',
  'temperature',
  'reasoning',
  'usage',
  'max_output_tokens',
  'max_tool_calls',
  'store',
  'background',
  'service_tier',
  'metadata',
  'safety_identifier',
  'prompt_cache_key',
];

function translate(requestBody: unknown, completion: unknown): ResponseObject {
  const request = validateResponsesRequest(requestBody);
  const { toolNames } = toChatRequest(request, []);
  const response = createResponseObject(request, { id: 'resp_test', createdAt: 1760000000, model: request.model });
  return fromChatCompletion(completion as ChatCompletion, { response, toolNames, completedAt: 1760000005 });
}

function completion(message: Record<string, unknown>, finishReason: string, extra: Record<string, unknown> = {}) {
  return {
    id: 'chatcmpl-x',
    object: 'chat.completion',
    created: 1760000000,
    model: 'upstream-model',
    choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finishReason, logprobs: null }],
    usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 },
    ...extra,
  };
}

describe('fromChatCompletion', () => {
  it('builds the whole response: reasoning, message, function calls under their own names, usage in Responses names', () => {
    const response = translate(fixture('tools-request.json'), fixture('chat-completion-reasoning-tools.json'));
    for (const field of requiredFields) expect(response, field).toHaveProperty(field);
    expect(response).toMatchObject({
      id: 'resp_test',
      object: 'response',
      created_at: 1760000000,
      completed_at: 1760000005,
      status: 'completed',
      error: null,
      incomplete_details: null,
      instructions: 'Use the tools.',
      model: 'upstream-model',
      parallel_tool_calls: true,
      previous_response_id: null,
      reasoning: { effort: 'low', summary: 'auto' },
      store: true,
      background: false,
      temperature: 1,
      top_p: 1,
      text: { format: { type: 'text' }, verbosity: 'medium' },
      tool_choice: 'auto',
      truncation: 'disabled',
      metadata: { session: 's1' },
      usage: {
        input_tokens: 50,
        input_tokens_details: { cached_tokens: 10, cache_write_tokens: 4 },
        output_tokens: 20,
        output_tokens_details: { reasoning_tokens: 5 },
        total_tokens: 70,
      },
    });
    expect(response.tools).toEqual((fixture('tools-request.json') as { tools: unknown }).tools);
    expect(response.output).toEqual([
      {
        id: expect.stringMatching(/^rs_[0-9a-f]{32}$/),
        type: 'reasoning',
        status: 'completed',
        summary: [{ type: 'summary_text', text: 'The user wants weather and time.' }],
      },
      {
        id: expect.stringMatching(/^msg_[0-9a-f]{32}$/),
        type: 'message',
        status: 'completed',
        role: 'assistant',
        content: [{ type: 'output_text', text: 'Let me check both.', annotations: [], logprobs: [] }],
      },
      {
        id: expect.stringMatching(/^fc_[0-9a-f]{32}$/),
        type: 'function_call',
        status: 'completed',
        arguments: '{"city":"Paris"}',
        call_id: 'call_weather',
        name: 'lookup',
        namespace: 'weather',
      },
      {
        id: expect.stringMatching(/^fc_/),
        type: 'function_call',
        status: 'completed',
        arguments: '{"tz":"UTC"}',
        call_id: 'call_time',
        name: 'get_time',
      },
    ]);
    expect(new Set(response.output.map((item) => item.id)).size).toBe(4);
  });

  it('is incomplete when the upstream stopped at its length limit or a content filter', () => {
    const cut = translate(
      { model: 'm', input: 'x', max_output_tokens: 3 },
      completion({ content: 'Once upon' }, 'length'),
    );
    expect(cut).toMatchObject({
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
      max_output_tokens: 3,
      output: [{ type: 'message', status: 'incomplete' }],
    });
    const filtered = translate({ model: 'm', input: 'x' }, completion({ content: null }, 'content_filter'));
    expect(filtered).toMatchObject({
      status: 'incomplete',
      incomplete_details: { reason: 'content_filter' },
      output: [],
    });
  });

  it('keeps refusals, citations and logprobs, and takes the estimate when the upstream reports no usage', () => {
    const logprobs = [
      {
        token: 'Hi',
        logprob: -0.1,
        bytes: [72, 105],
        top_logprobs: [{ token: 'Hi', logprob: -0.1, bytes: [72, 105] }],
      },
    ];
    const citation = {
      type: 'url_citation',
      url_citation: { start_index: 0, end_index: 2, url: 'https://a.example', title: 'A' },
    };
    const request = validateResponsesRequest({ model: 'm', input: 'x' });
    const response = fromChatCompletion(
      {
        ...completion({ content: 'Hi', refusal: 'not that', annotations: [citation] }, 'stop'),
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: 'Hi', refusal: 'not that', annotations: [citation] },
            logprobs: { content: logprobs },
            finish_reason: 'stop',
          },
        ],
        usage: undefined,
      } as ChatCompletion,
      {
        response: createResponseObject(request, { id: 'resp_x', createdAt: 1, model: 'm' }),
        toolNames: toChatRequest(request, []).toolNames,
        usage: { prompt_tokens: 4, completion_tokens: 1, total_tokens: 5 },
      },
    );
    expect(response.output).toEqual([
      {
        id: expect.any(String),
        type: 'message',
        status: 'completed',
        role: 'assistant',
        content: [
          {
            type: 'output_text',
            text: 'Hi',
            annotations: [{ type: 'url_citation', start_index: 0, end_index: 2, url: 'https://a.example', title: 'A' }],
            logprobs,
          },
          { type: 'refusal', refusal: 'not that' },
        ],
      },
    ]);
    expect(response.usage).toMatchObject({ input_tokens: 4, output_tokens: 1, total_tokens: 5 });
  });

  it('is read by the openai SDK (responses.create) and the AI SDK (generateText with openai(model))', async () => {
    const response = translate(fixture('tools-request.json'), fixture('chat-completion-reasoning-tools.json'));
    const canned = cannedFetch(JSON.stringify(response), 'application/json');
    const client = new OpenAI({ apiKey: 'sk-test', baseURL: 'http://gateway.test/v1', fetch: canned.fetch });
    const read = await client.responses.create({ model: 'gpt-test', input: 'x' });
    expect(read.output_text).toBe('Let me check both.');
    expect(read.output.map((item) => item.type)).toEqual(['reasoning', 'message', 'function_call', 'function_call']);
    expect(canned.requests[0]?.url).toBe('http://gateway.test/v1/responses');

    const provider = createOpenAI({ apiKey: 'sk-test', baseURL: 'http://gateway.test/v1', fetch: canned.fetch });
    const parameters = (name: string) =>
      jsonSchema<Record<string, string>>({ type: 'object', properties: { [name]: { type: 'string' } } });
    const result = await generateText({
      model: provider('gpt-test'),
      prompt: 'What is the weather in Paris, and the time in UTC?',
      tools: { lookup: tool({ inputSchema: parameters('city') }), get_time: tool({ inputSchema: parameters('tz') }) },
    });
    expect(canned.requests[1]?.url).toBe('http://gateway.test/v1/responses');
    expect(result.text).toBe('Let me check both.');
    expect(result.reasoningText).toBe('The user wants weather and time.');
    expect(result.toolCalls.map((call) => [call.toolName, call.toolCallId, call.input])).toEqual([
      ['lookup', 'call_weather', { city: 'Paris' }],
      ['get_time', 'call_time', { tz: 'UTC' }],
    ]);
    expect(result.finishReason).toBe('tool-calls');
    expect(result.usage).toMatchObject({ inputTokens: 50, outputTokens: 20, totalTokens: 70 });
  });
});
