import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fromChatCompletion } from '../../src/api/v1/responses/from-chat-completion.js';
import { createResponseObject } from '../../src/api/v1/responses/response-object.js';
import { storedResponseObject } from '../../src/api/v1/responses/stored-response.js';
import { readStoredSettings, storedSettingsJson } from '../../src/api/v1/responses/stored-settings.js';
import { createToolNameMap } from '../../src/api/v1/responses/tool-names.js';
import type { ResponseObject } from '../../src/api/v1/responses/types.js';
import { validateResponsesRequest } from '../../src/api/v1/responses/validate-request.js';

/** A finished response to `body`, as the handler builds it from a chat completion. */
function finished(body: Record<string, unknown>): ResponseObject {
  const request = validateResponsesRequest({ model: 'm', input: 'Hello', ...body });
  const base = createResponseObject(request, {
    id: 'resp_0194a1b2c3d4e5f60718293a4b',
    createdAt: 1_800_000_000,
    model: 'm',
  });
  return fromChatCompletion(
    {
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 1,
      model: 'm-2026',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hi!' }, finish_reason: 'stop', logprobs: null }],
      usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
    },
    { response: base, toolNames: createToolNameMap([]), completedAt: 1_800_000_001 },
  );
}

function roundTrip(response: ResponseObject): { whole: string; stored: string; read: string } {
  const { output: _output, ...settings } = response;
  const whole = JSON.stringify(settings);
  const stored = storedSettingsJson(settings, whole);
  return { whole, stored, read: JSON.stringify(readStoredSettings(stored)) };
}

describe('stored response settings', () => {
  it('keeps only what differs from the defaults, and reads back the same bytes', () => {
    const { whole, stored, read } = roundTrip(finished({}));
    expect(read).toBe(whole);
    expect(stored.startsWith('[2,')).toBe(true);
    expect(stored.length).toBeLessThan(whole.length / 2);
    expect(stored).not.toContain('"store"');
  });

  it('reads back every setting a request can echo', () => {
    const response = finished({
      instructions: 'Be brief.',
      max_output_tokens: 100,
      metadata: { k: 'v' },
      parallel_tool_calls: false,
      previous_response_id: 'resp_01',
      reasoning: { effort: 'low' },
      store: true,
      temperature: 0.2,
      top_p: 0.5,
      text: { format: { type: 'json_schema', name: 'x', schema: { type: 'object' } }, verbosity: 'low' },
      tool_choice: 'required',
      tools: [{ type: 'function', name: 'f', parameters: { type: 'object' } }],
      user: 'u',
      truncation: 'auto',
    });
    const { whole, read } = roundTrip(response);
    expect(read).toBe(whole);
  });

  it('reads back any values in the gateway shape', () => {
    const value = fc.oneof(
      fc.constant(null),
      fc.boolean(),
      fc.integer(),
      fc.string(),
      fc.dictionary(fc.string(), fc.string()),
    );
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom(...Object.keys(finished({}))), value), (changes) => {
        const response = { ...finished({}), ...changes, output: [] } as ResponseObject;
        const { whole, read } = roundTrip(response);
        expect(read).toBe(whole);
      }),
    );
  });

  it('stores an object of another shape (a native upstream) whole', () => {
    const native = { id: 'resp_x', object: 'response', status: 'completed', model: 'm', extra: { a: 1 } };
    const whole = JSON.stringify(native);
    expect(storedSettingsJson(native as unknown as ResponseObject, whole)).toBe(whole);
  });

  it('reads rows written before version 2 (the whole object) as they are', () => {
    const { output: _output, ...settings } = finished({ metadata: { k: 'v' } });
    const row = { response: JSON.stringify(settings), outputItems: '[{"id":"msg_1","type":"message"}]' };
    expect(JSON.stringify(storedResponseObject(row))).toBe(
      JSON.stringify({ ...settings, output: [{ id: 'msg_1', type: 'message' }] }),
    );
  });

  it('refuses a version it does not know', () => {
    expect(() => readStoredSettings('[3,{}]')).toThrow(/version 3/);
  });
});
