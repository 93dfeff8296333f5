import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createNativeStreamReader, nativeRequestBody, nativeUsage } from '../../src/api/v1/responses/native.js';
import { validateResponsesRequest } from '../../src/api/v1/responses/validate-request.js';
import { SseParser } from '../../src/upstream/sse.js';

const fixtures = path.resolve(import.meta.dirname, '../fixtures/responses');
const read = (name: string) => readFileSync(path.join(fixtures, name));

const expectedUsage = {
  prompt_tokens: 120,
  completion_tokens: 30,
  total_tokens: 150,
  prompt_tokens_details: { cached_tokens: 64, cache_write_tokens: 0 },
  completion_tokens_details: { reasoning_tokens: 18 },
};

describe('native Responses upstreams', () => {
  it('forwards the body with only the model changed, or the very bytes when the model is the same', () => {
    const bytes = read('codex-request.json');
    const request = validateResponsesRequest(JSON.parse(bytes.toString('utf8')));
    expect(nativeRequestBody(request, 'gpt-5-codex', bytes)).toBe(bytes);
    const rewritten = JSON.parse(String(nativeRequestBody(request, 'gpt-5.1-codex-2025', bytes)));
    expect(rewritten).toEqual({ ...JSON.parse(bytes.toString('utf8')), model: 'gpt-5.1-codex-2025' });
    expect(Object.keys(rewritten)).toEqual(Object.keys(request));
    // Reasoning state, namespace tools and hosted tools go through untouched.
    expect(rewritten.input[3].encrypted_content).toBe('gAAAAABo-opaque-reasoning-state');
    expect(rewritten.tools[2]).toEqual({ type: 'web_search', external_web_access: false });
  });

  it('reads usage from a JSON answer', () => {
    expect(nativeUsage(JSON.parse(read('native-response.json').toString('utf8')))).toEqual(expectedUsage);
    expect(nativeUsage({ id: 'resp_1', usage: null })).toBeUndefined();
    expect(nativeUsage('nonsense')).toBeUndefined();
  });

  it('reads usage and the outcome from the terminal event of a stream', () => {
    const reader = createNativeStreamReader();
    const parser = new SseParser();
    // Fed in small pieces, as a network delivers it.
    const bytes = read('native-stream.sse');
    for (let offset = 0; offset < bytes.length; offset += 97) {
      for (const event of parser.push(bytes.subarray(offset, offset + 97))) reader.push(event);
    }
    expect(reader.outcome()).toBe('completed');
    expect(reader.usage()).toEqual(expectedUsage);
  });

  it('finds the terminal event without an event line, and reports a stream cut short', () => {
    const failed = createNativeStreamReader();
    failed.push({ event: undefined, data: '{"type":"response.output_text.delta","delta":"response.completed"}' });
    expect(failed.outcome()).toBeUndefined();
    failed.push({
      event: undefined,
      data: JSON.stringify({
        type: 'response.failed',
        response: { status: 'failed', usage: { input_tokens: 3, output_tokens: 0 } },
      }),
    });
    expect(failed.outcome()).toBe('failed');
    expect(failed.usage()).toMatchObject({ prompt_tokens: 3, completion_tokens: 0, total_tokens: 3 });
    const cut = createNativeStreamReader();
    cut.push({ event: 'response.output_text.delta', data: '{"type":"response.output_text.delta","delta":"x"}' });
    expect(cut.outcome()).toBeUndefined();
    expect(cut.usage()).toBeUndefined();
  });
});
