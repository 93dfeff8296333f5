import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { validateResponsesRequest } from '../../src/api/v1/responses/validate-request.js';
import { ApiError } from '../../src/errors/api-error.js';

const fixtures = path.resolve(import.meta.dirname, '../fixtures/responses');
const codexRequest = (): Record<string, unknown> =>
  JSON.parse(readFileSync(path.join(fixtures, 'codex-request.json'), 'utf8'));

function errorOf(body: unknown): { status: number; param: string | null; code: string | null; message: string } {
  try {
    validateResponsesRequest(body);
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    return { status: error.status, param: error.param, code: error.code, message: error.message };
  }
  throw new Error('the request was accepted');
}

const base = { model: 'm', input: 'hi' };

describe('validateResponsesRequest', () => {
  it('accepts what Codex sends: developer messages, reasoning with encrypted content, namespace and hosted tools', () => {
    const request = codexRequest();
    expect(validateResponsesRequest(request)).toBe(request);
  });

  it('accepts every input form: a string, easy messages, typed items, content parts, item references', () => {
    const request = {
      model: 'm',
      instructions: 'Be brief.',
      input: [
        { role: 'user', content: 'plain' },
        { role: 'assistant', content: 'earlier answer' },
        { role: 'system', content: [{ type: 'input_text', text: 'system part' }] },
        {
          type: 'message',
          role: 'user',
          content: [
            { type: 'input_text', text: 'look' },
            { type: 'input_image', image_url: 'https://example.com/a.png', detail: 'high' },
            { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=' },
            { type: 'input_image', file_id: 'file-123' },
            { type: 'input_file', filename: 'a.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' },
            { type: 'input_file', file_url: 'https://example.com/a.pdf' },
            { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } },
          ],
        },
        {
          type: 'message',
          id: 'msg_1',
          role: 'assistant',
          status: 'completed',
          content: [
            { type: 'output_text', text: 'hello', annotations: [] },
            { type: 'refusal', refusal: 'no' },
          ],
        },
        { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' },
        {
          type: 'function_call_output',
          call_id: 'c1',
          output: [
            { type: 'input_text', text: 'result' },
            { type: 'input_image', image_url: 'https://example.com/chart.png' },
          ],
        },
        { type: 'reasoning', summary: [], content: [{ type: 'reasoning_text', text: 'thinking' }] },
        { type: 'item_reference', id: 'msg_0' },
        { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'x' } },
        { type: 'acme:telemetry_chunk', id: 'tc_1', status: 'completed' },
      ],
    };
    expect(validateResponsesRequest(request)).toBe(request);
    expect(validateResponsesRequest({ model: 'm', previous_response_id: 'resp_1' })).toBeTruthy();
  });

  it('keeps unknown top-level fields and settings for the upstream', () => {
    const request = {
      ...base,
      top_k: 40,
      client_metadata: { a: 'b' },
      context_management: [{ type: 'compaction' }],
      text: {
        format: { type: 'json_schema', name: 'answer', schema: { type: 'object' }, strict: true },
        verbosity: 'low',
      },
      reasoning: { effort: 'high', summary: 'detailed' },
      tool_choice: { type: 'allowed_tools', mode: 'auto', tools: [{ type: 'function', name: 'f' }] },
      metadata: { k: 'v'.repeat(512) },
      include: ['message.output_text.logprobs'],
      truncation: 'disabled',
      stream: true,
      stream_options: { include_obfuscation: false },
      background: false,
    };
    expect(validateResponsesRequest(request)).toBe(request);
  });

  const cases: Array<[string, unknown, { param: string | null; code: string; status?: number }]> = [
    ['a body that is not an object', [], { param: null, code: 'invalid_type' }],
    ['no model', { input: 'x' }, { param: 'model', code: 'missing_required_parameter' }],
    ['an empty model', { model: '', input: 'x' }, { param: 'model', code: 'invalid_value' }],
    ['no input and nothing to continue', { model: 'm' }, { param: 'input', code: 'missing_required_parameter' }],
    ['input of the wrong type', { model: 'm', input: 7 }, { param: 'input', code: 'invalid_type' }],
    ['an item that is not an object', { model: 'm', input: ['x'] }, { param: 'input[0]', code: 'invalid_type' }],
    [
      'a message without role',
      { model: 'm', input: [{ content: 'x' }] },
      { param: 'input[0].role', code: 'missing_required_parameter' },
    ],
    [
      'an unknown role',
      { model: 'm', input: [{ role: 'tool', content: 'x' }] },
      { param: 'input[0].role', code: 'invalid_value' },
    ],
    [
      'a message without content',
      { model: 'm', input: [{ type: 'message', role: 'user' }] },
      { param: 'input[0].content', code: 'missing_required_parameter' },
    ],
    [
      'an output part in a user message',
      { model: 'm', input: [{ role: 'user', content: [{ type: 'output_text', text: 'x' }] }] },
      { param: 'input[0].content[0].type', code: 'invalid_value' },
    ],
    [
      'a text part without text',
      { model: 'm', input: [{ role: 'user', content: [{ type: 'input_text' }] }] },
      { param: 'input[0].content[0].text', code: 'missing_required_parameter' },
    ],
    [
      'an image without a source',
      { model: 'm', input: [{ role: 'user', content: [{ type: 'input_image', detail: 'auto' }] }] },
      { param: 'input[0].content[0].image_url', code: 'missing_required_parameter' },
    ],
    [
      'an image detail that does not exist',
      { model: 'm', input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'x', detail: 'ultra' }] }] },
      { param: 'input[0].content[0].detail', code: 'invalid_value' },
    ],
    [
      'a file without data',
      { model: 'm', input: [{ role: 'user', content: [{ type: 'input_file', filename: 'a.pdf' }] }] },
      { param: 'input[0].content[0]', code: 'missing_required_parameter' },
    ],
    [
      'a function call without call_id',
      { model: 'm', input: [{ type: 'function_call', name: 'f', arguments: '{}' }] },
      { param: 'input[0].call_id', code: 'missing_required_parameter' },
    ],
    [
      'a function call with arguments as an object',
      { model: 'm', input: [{ type: 'function_call', call_id: 'c', name: 'f', arguments: {} }] },
      { param: 'input[0].arguments', code: 'invalid_type' },
    ],
    [
      'a function call output with a numeric call_id',
      {
        model: 'm',
        input: [
          { role: 'user', content: 'x' },
          { type: 'function_call_output', call_id: 3, output: 'x' },
        ],
      },
      { param: 'input[1].call_id', code: 'invalid_type' },
    ],
    [
      'a function call output without output',
      { model: 'm', input: [{ type: 'function_call_output', call_id: 'c' }] },
      { param: 'input[0].output', code: 'missing_required_parameter' },
    ],
    [
      'a reasoning summary of the wrong type',
      { model: 'm', input: [{ type: 'reasoning', summary: [{ type: 'text', text: 'x' }] }] },
      { param: 'input[0].summary[0].type', code: 'invalid_value' },
    ],
    [
      'an item reference without id',
      { model: 'm', input: [{ type: 'item_reference' }] },
      { param: 'input[0].id', code: 'missing_required_parameter' },
    ],
    ['a numeric item type', { model: 'm', input: [{ type: 5 }] }, { param: 'input[0].type', code: 'invalid_type' }],
    ['temperature above 2', { ...base, temperature: 3 }, { param: 'temperature', code: 'decimal_above_max_value' }],
    ['top_p below 0', { ...base, top_p: -0.5 }, { param: 'top_p', code: 'decimal_below_min_value' }],
    [
      'max_output_tokens of 0',
      { ...base, max_output_tokens: 0 },
      { param: 'max_output_tokens', code: 'integer_below_min_value' },
    ],
    [
      'a decimal max_output_tokens',
      { ...base, max_output_tokens: 1.5 },
      { param: 'max_output_tokens', code: 'invalid_type' },
    ],
    [
      'top_logprobs above 20',
      { ...base, top_logprobs: 21 },
      { param: 'top_logprobs', code: 'integer_above_max_value' },
    ],
    ['stream as a string', { ...base, stream: 'yes' }, { param: 'stream', code: 'invalid_type' }],
    ['store as a number', { ...base, store: 1 }, { param: 'store', code: 'invalid_type' }],
    ['background mode', { ...base, background: true }, { param: 'background', code: 'unsupported_parameter' }],
    [
      'stream_options without stream',
      { ...base, stream_options: {} },
      { param: 'stream_options', code: 'invalid_value' },
    ],
    ['an unknown truncation', { ...base, truncation: 'middle' }, { param: 'truncation', code: 'invalid_value' }],
    [
      'seventeen metadata pairs',
      { ...base, metadata: Object.fromEntries(Array.from({ length: 17 }, (_, index) => [`k${index}`, 'v'])) },
      { param: 'metadata', code: 'object_above_max_properties' },
    ],
    [
      'a metadata key of 65 characters',
      { ...base, metadata: { ['k'.repeat(65)]: 'v' } },
      { param: 'metadata', code: 'string_above_max_length' },
    ],
    [
      'a metadata value of 513 characters',
      { ...base, metadata: { k: 'v'.repeat(513) } },
      { param: 'metadata.k', code: 'string_above_max_length' },
    ],
    ['a numeric metadata value', { ...base, metadata: { k: 1 } }, { param: 'metadata.k', code: 'invalid_type' }],
    [
      'an unknown reasoning effort',
      { ...base, reasoning: { effort: 'max' } },
      { param: 'reasoning.effort', code: 'invalid_value' },
    ],
    ['include as a string', { ...base, include: 'x' }, { param: 'include', code: 'invalid_type' }],
    ['tools as an object', { ...base, tools: {} }, { param: 'tools', code: 'invalid_type' }],
    [
      'a tool without type',
      { ...base, tools: [{ name: 'f' }] },
      { param: 'tools[0].type', code: 'missing_required_parameter' },
    ],
    [
      'a function tool without name',
      { ...base, tools: [{ type: 'function', parameters: {} }] },
      { param: 'tools[0].name', code: 'missing_required_parameter' },
    ],
    [
      'a chat-style function tool (name nested under function)',
      { ...base, tools: [{ type: 'function', function: { name: 'f' } }] },
      { param: 'tools[0].name', code: 'missing_required_parameter' },
    ],
    [
      'function parameters as a string',
      { ...base, tools: [{ type: 'function', name: 'f', parameters: '{}' }] },
      { param: 'tools[0].parameters', code: 'invalid_type' },
    ],
    [
      'a namespace without tools',
      { ...base, tools: [{ type: 'namespace', name: 'n', description: 'd' }] },
      { param: 'tools[0].tools', code: 'missing_required_parameter' },
    ],
    [
      'a hosted tool inside a namespace',
      { ...base, tools: [{ type: 'namespace', name: 'n', tools: [{ type: 'web_search' }] }] },
      { param: 'tools[0].tools[0].type', code: 'invalid_value' },
    ],
    ['an unknown tool_choice', { ...base, tool_choice: 'any' }, { param: 'tool_choice', code: 'invalid_value' }],
    [
      'a function tool_choice without name',
      { ...base, tool_choice: { type: 'function' } },
      { param: 'tool_choice.name', code: 'missing_required_parameter' },
    ],
    [
      'a json_schema format without name',
      { ...base, text: { format: { type: 'json_schema', schema: {} } } },
      { param: 'text.format.name', code: 'missing_required_parameter' },
    ],
    [
      'a json_schema name with spaces',
      { ...base, text: { format: { type: 'json_schema', name: 'my schema', schema: {} } } },
      { param: 'text.format.name', code: 'invalid_value' },
    ],
    [
      'an unknown text format',
      { ...base, text: { format: { type: 'xml' } } },
      { param: 'text.format.type', code: 'invalid_value' },
    ],
    [
      'an unknown verbosity',
      { ...base, text: { verbosity: 'loud' } },
      { param: 'text.verbosity', code: 'invalid_value' },
    ],
  ];

  it.each(cases)('refuses %s with a 400 naming the field', (_name, body, expected) => {
    const error = errorOf(body);
    expect({ status: error.status, param: error.param, code: error.code }).toEqual({ status: 400, ...expected });
    expect(error.message.length).toBeGreaterThan(10);
  });

  it('words errors as OpenAI does', () => {
    expect(errorOf({ model: 'm', input: [{ type: 'function_call', name: 'f', arguments: '{}' }] }).message).toBe(
      "Missing required parameter: 'input[0].call_id'.",
    );
    expect(errorOf({ ...base, temperature: 3 }).message).toBe(
      "Invalid 'temperature': decimal above maximum value. Expected a value <= 2, but got 3 instead.",
    );
    expect(errorOf({ model: 'm', input: [{ role: 'tool', content: 'x' }] }).message).toBe(
      "Invalid value: 'tool'. Supported values are: 'user', 'assistant', 'system', and 'developer'.",
    );
  });
});
