import { describe, expect, it } from 'vitest';
import { openAiErrorBody } from '../../src/errors/render-openai.js';
import type { ChatCompletionRequest } from '../../src/openai/types.js';
import { convertRequest, unsupportedParameters } from '../../src/providers/anthropic/convert-request.js';
import { mapStopReason } from '../../src/providers/anthropic/map-stop-reason.js';
import { parseAnthropicError } from '../../src/providers/anthropic/parse-error.js';
import { createAnthropicStreamTranslator } from '../../src/providers/anthropic/translate-stream.js';
import { apiErrorOf } from '../support/api-error.js';

const defaults = { upstreamModel: 'claude', stream: false };
const convert = (
  request: Partial<ChatCompletionRequest>,
  extra: Partial<typeof defaults> & { maxOutputTokens?: number } = {},
) =>
  convertRequest({ model: 'm', messages: [{ role: 'user', content: 'hi' }], ...request } as ChatCompletionRequest, {
    ...defaults,
    ...extra,
  });

describe('Anthropic request translation', () => {
  it('synthesizes max_tokens: client value, else the model limit, else 4096', () => {
    expect(convert({ max_completion_tokens: 10, max_tokens: 20 }).max_tokens).toBe(10);
    expect(convert({ max_tokens: 20 }).max_tokens).toBe(20);
    expect(convert({}, { maxOutputTokens: 64_000 }).max_tokens).toBe(64_000);
    expect(convert({}).max_tokens).toBe(4096);
  });

  it('clamps temperature to Anthropic’s 0-1 range instead of rescaling it', () => {
    expect(convert({ temperature: 1.7 }).temperature).toBe(1);
    expect(convert({ temperature: 0.3 }).temperature).toBe(0.3);
  });

  it('leaves out top_p 1 beside a temperature (newer Claude models refuse both; 1 truncates nothing)', () => {
    // LangChain's ChatOpenAI sends temperature and top_p: 1 unless told otherwise.
    expect(convert({ temperature: 0.7, top_p: 1 })).toMatchObject({ temperature: 0.7 });
    expect(convert({ temperature: 0.7, top_p: 1 })).not.toHaveProperty('top_p');
    // A top_p that does truncate is the client's choice, sent as it is (with or without a temperature).
    expect(convert({ temperature: 0.7, top_p: 0.9 })).toMatchObject({ temperature: 0.7, top_p: 0.9 });
    expect(convert({ top_p: 1 })).toMatchObject({ top_p: 1 });
  });

  it('maps every tool_choice form, and parallel_tool_calls: false', () => {
    const tools = [
      { type: 'function', function: { name: 'a', parameters: { type: 'object' } } },
      { type: 'function', function: { name: 'b' } },
    ];
    expect(convert({ tools, tool_choice: 'auto' }).tool_choice).toEqual({ type: 'auto' });
    expect(convert({ tools, tool_choice: 'none' }).tool_choice).toEqual({ type: 'none' });
    expect(convert({ tools, tool_choice: { type: 'function', function: { name: 'b' } } }).tool_choice).toEqual({
      type: 'tool',
      name: 'b',
    });
    expect(convert({ tools, parallel_tool_calls: false }).tool_choice).toEqual({
      type: 'auto',
      disable_parallel_tool_use: true,
    });
    const allowed = convert({
      tools,
      tool_choice: {
        type: 'allowed_tools',
        allowed_tools: { mode: 'required', tools: [{ type: 'function', function: { name: 'a' } }] },
      },
    });
    expect(allowed.tools?.map((tool) => tool.name)).toEqual(['a']);
    expect(allowed.tool_choice).toEqual({ type: 'any' });
    // No tools: no tool_choice either.
    expect(convert({ tool_choice: 'required' })).not.toHaveProperty('tool_choice');
  });

  it('keeps cache_control markers on parts, messages and tools', () => {
    const body = convert({
      messages: [
        { role: 'system', content: 'rules', cache_control: { type: 'ephemeral' } },
        { role: 'user', content: [{ type: 'text', text: 'doc', cache_control: { type: 'ephemeral', ttl: '1h' } }] },
      ],
      tools: [{ type: 'function', function: { name: 'a' }, cache_control: { type: 'ephemeral' } }],
    });
    expect(body.system).toEqual([{ type: 'text', text: 'rules', cache_control: { type: 'ephemeral' } }]);
    expect(body.messages[0]?.content).toEqual([
      { type: 'text', text: 'doc', cache_control: { type: 'ephemeral', ttl: '1h' } },
    ]);
    expect(body.tools?.[0]?.cache_control).toEqual({ type: 'ephemeral' });
  });

  it('translates a PDF file part into a document block', () => {
    const body = convert({
      messages: [
        {
          role: 'user',
          content: [{ type: 'file', file: { filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' } }],
        },
      ],
    });
    expect(body.messages[0]?.content[0]).toEqual({
      type: 'document',
      source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' },
      title: 'a.pdf',
    });
  });

  it('refuses content it cannot represent with a 400 naming the part', () => {
    const audio = apiErrorOf(() =>
      convert({
        messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'x', format: 'wav' } }] }],
      }),
    );
    expect(openAiErrorBody(audio).error).toMatchObject({
      code: 'unsupported_value',
      param: 'messages[0].content[0].type',
    });
    const tiff = apiErrorOf(() =>
      convert({
        messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/tiff;base64,AA' } }] }],
      }),
    );
    expect(tiff.status).toBe(400);
    // image/jpg is no registered type, but clients write it (and OpenAI takes it): it is JPEG.
    const jpg = convert({
      messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:IMAGE/JPG;base64,/9j/' } }] }],
    });
    expect(jpg.messages[0]?.content).toEqual([
      { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: '/9j/' } },
    ]);
    const args = apiErrorOf(() =>
      convert({
        messages: [
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: 'c', type: 'function', function: { name: 'a', arguments: '{oops' } }],
          },
        ],
      }),
    );
    expect(args.param).toBe('messages[0].tool_calls[0].function.arguments');
  });

  it('lists what it cannot translate, including json_object', () => {
    expect(
      unsupportedParameters({
        model: 'm',
        messages: [],
        seed: 1,
        logprobs: true,
        response_format: { type: 'json_object' },
        temperature: 1,
      }),
    ).toEqual(['logprobs', 'seed', 'response_format']);
  });
});

describe('Anthropic responses, streams and errors', () => {
  it('maps every stop reason', () => {
    expect(
      [
        'end_turn',
        'stop_sequence',
        'pause_turn',
        'max_tokens',
        'model_context_window_exceeded',
        'tool_use',
        'refusal',
        null,
      ].map(mapStopReason),
    ).toEqual(['stop', 'stop', 'stop', 'length', 'length', 'tool_calls', 'content_filter', 'stop']);
  });

  it('streams thinking as reasoning_content and thinking_blocks, ignores unknown events and pings, throws on error events', () => {
    const translator = createAnthropicStreamTranslator('claude', 'm', 1);
    const deltas = [
      {
        type: 'message_start',
        message: { id: 'msg_1', model: 'claude-x', usage: { input_tokens: 3, output_tokens: 1 } },
      },
      { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'hmm' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'sig' } },
      { type: 'ping' },
      { type: 'some_future_event', index: 0 },
    ].flatMap((event) => translator.push(event).map((chunk) => chunk.choices[0]?.delta));
    expect(deltas).toEqual([
      { role: 'assistant', content: '' },
      { reasoning_content: 'hmm', thinking_blocks: [{ type: 'thinking', thinking: 'hmm', index: 0 }] },
      { thinking_blocks: [{ type: 'thinking', thinking: '', signature: 'sig', index: 0 }] },
    ]);
    const overloaded = apiErrorOf(() =>
      translator.push({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }),
    );
    expect(overloaded).toMatchObject({ status: 503, code: 'upstream_overloaded' });
    expect(() => createAnthropicStreamTranslator('claude', 'm', 1).end()).toThrow(/before message_stop/);
  });

  it('turns error bodies into OpenAI errors: 529 -> 503, 401 -> 502, 413 kept, 402 -> 502', () => {
    const body = (type: string, message: string) => JSON.stringify({ type: 'error', error: { type, message } });
    expect(parseAnthropicError('a', 529, {}, body('overloaded_error', 'Overloaded'))).toMatchObject({
      status: 503,
      type: 'server_error',
    });
    expect(parseAnthropicError('a', 401, {}, body('authentication_error', 'invalid x-api-key'))).toMatchObject({
      status: 502,
      code: 'upstream_auth_failed',
    });
    expect(parseAnthropicError('a', 413, {}, body('request_too_large', 'too big'))).toMatchObject({
      status: 413,
      code: 'request_too_large',
    });
    expect(parseAnthropicError('a', 402, {}, body('billing_error', 'credit'))).toMatchObject({
      status: 502,
      code: 'upstream_payment_required',
    });
    expect(parseAnthropicError('a', 500, {}, '<html>oops</html>').message).toContain('non-JSON error body');
  });
});
