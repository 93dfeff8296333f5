import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { betaQuery, clientProtocolHeaders } from '../../src/api/v1/messages/native-request.js';
import { createNativeStreamRelay, nativeMessageUsage } from '../../src/api/v1/messages/native-usage.js';
import { rewriteModel } from '../../src/api/v1/messages/rewrite-model.js';
import type { ProviderConfigOf } from '../../src/config/schema.js';
import { forwardHeaders } from '../../src/providers/anthropic/forward-headers.js';
import type { ForwardCall } from '../../src/providers/provider.js';
import { SseParser } from '../../src/upstream/sse.js';
import { thinkingAnswer } from '../support/mock-anthropic-upstream.js';

const rewrite = (text: string, model: string) => {
  const result = rewriteModel(Buffer.from(text), model);
  return { text: result.body.toString(), reserialized: result.reserialized };
};

describe('rewriting only the model in the client’s bytes', () => {
  it('replaces the value and leaves every other byte as it was', () => {
    const body =
      '{\n  "max_tokens" : 10,\n  "messages": [{"role":"user","content":"caf\\u00e9 \\"model\\": x"}],\n' +
      '  "metadata": {"model": "not this one"},\n  "model"\t:  "claude-public"  ,\n  "z": 1\n}\n';
    expect(rewrite(body, 'claude-sonnet-4-5-20250929')).toEqual({
      text: body.replace('"claude-public"', '"claude-sonnet-4-5-20250929"'),
      reserialized: false,
    });
  });

  it('finds a model name spelled with escapes, and writes the new name as JSON', () => {
    expect(rewrite('{"mod\\u0065l":"a","x":[]}', 'b"c')).toEqual({
      text: '{"mod\\u0065l":"b\\"c","x":[]}',
      reserialized: false,
    });
  });

  it('returns the same buffer when the name does not change', () => {
    const body = Buffer.from('{"model":"same","messages":[]}');
    expect(rewriteModel(body, 'same').body).toBe(body);
  });

  it('parses and serializes again only when the bytes cannot be edited safely', () => {
    expect(rewrite('{"model":"a","model":"b"}', 'c')).toEqual({ text: '{"model":"c"}', reserialized: true });
    expect(rewrite('{"model":5}', 'c')).toEqual({ text: '{"model":"c"}', reserialized: true });
    const deep = `{"model":"a","x":${'['.repeat(40)}${']'.repeat(40)}}`;
    expect(rewrite(deep, 'c').reserialized).toBe(true);
    expect(JSON.parse(rewrite(deep, 'c').text).model).toBe('c');
  });

  it('gives the object the client sent with only the model changed, whatever the object', () => {
    fc.assert(
      fc.property(
        fc.dictionary(
          fc.string().filter((name) => name !== 'model'),
          fc.jsonValue(),
          { maxKeys: 6 },
        ),
        fc.nat(6),
        fc.string(),
        fc.string(),
        (members, position, before, after) => {
          const write = (model: string) => {
            const entries: Array<[string, unknown]> = Object.entries(members);
            entries.splice(Math.min(position, entries.length), 0, ['model', model]);
            return `{${entries.map(([name, value]) => `${JSON.stringify(name)}: ${JSON.stringify(value)}`).join(', ')}}`;
          };
          const result = rewriteModel(Buffer.from(write(before)), after);
          expect(result.reserialized).toBe(false);
          expect(result.body.toString()).toBe(write(after));
        },
      ),
    );
  });
});

const provider = {
  name: 'claude',
  type: 'anthropic',
  baseUrl: 'https://api.anthropic.com/v1/',
  apiKey: 'sk-ant-provider',
  headers: { 'x-team': 'a' },
  version: '2023-06-01',
  beta: ['prompt-caching-2024-07-31', 'context-management-2025-06-27'],
} as unknown as ProviderConfigOf<'anthropic'>;

const forwardCall = (headers: Record<string, string>, stream: boolean) => ({ headers, stream }) as ForwardCall;

describe('what goes upstream besides the body', () => {
  it('forwards anthropic-version and anthropic-beta, adds the provider’s key, and nothing else of the client’s', () => {
    const client = clientProtocolHeaders({
      authorization: 'Bearer sk-sb-client-key',
      'x-api-key': 'sk-ant-client',
      cookie: 'a=b',
      'anthropic-version': '2023-06-01',
      'anthropic-beta': 'claude-code-20250219, context-management-2025-06-27',
      'x-claude-code-session-id': 'abc',
    });
    expect(client).toEqual({
      'anthropic-version': '2023-06-01',
      'anthropic-beta': 'claude-code-20250219, context-management-2025-06-27',
    });
    expect(forwardHeaders(provider, forwardCall(client, true))).toEqual({
      'content-type': 'application/json',
      accept: 'text/event-stream',
      'anthropic-version': '2023-06-01',
      'x-team': 'a',
      'anthropic-beta': 'claude-code-20250219,context-management-2025-06-27,prompt-caching-2024-07-31',
      'x-api-key': 'sk-ant-provider',
    });
  });

  it('uses the provider’s version when the client sent none', () => {
    const headers = forwardHeaders({ ...provider, beta: [] }, forwardCall(clientProtocolHeaders({}), false));
    expect(headers['anthropic-version']).toBe('2023-06-01');
    expect(headers).not.toHaveProperty('anthropic-beta');
    expect(headers.accept).toBe('application/json');
  });

  it('keeps only the beta marker of the client’s query', () => {
    expect(betaQuery('/v1/messages?beta=true&other=1')).toBe('beta=true');
    expect(betaQuery('/v1/messages?other=1')).toBeUndefined();
    expect(betaQuery('/v1/messages/count_tokens')).toBeUndefined();
  });
});

const thinkingUsage = {
  promptTokens: 2095 + 1000 + 500,
  completionTokens: 503,
  totalTokens: 2095 + 1000 + 500 + 503,
  cachedTokens: 500,
  cacheWriteTokens: 1000,
  reasoningTokens: 0,
  estimated: false,
};

const noEstimate = () => {
  throw new Error('no estimate expected');
};

describe('usage of a passed-through answer', () => {
  it('reads the usage of a JSON answer, cache reads and writes included', () => {
    expect(nativeMessageUsage(thinkingAnswer.json)).toEqual(thinkingUsage);
    expect(nativeMessageUsage(Buffer.from('{"type":"message","content":[]}'))).toBeUndefined();
    expect(nativeMessageUsage(Buffer.from('not json'))).toBeUndefined();
  });

  it('relays a stream event by event, byte for byte, and reads its usage on the way', () => {
    const relay = createNativeStreamRelay('claude', noEstimate);
    const parser = new SseParser();
    let out = '';
    // Cut the bytes anywhere: events are relayed whole once complete.
    for (let at = 0; at < thinkingAnswer.sse.length; at += 37) {
      for (const event of parser.push(thinkingAnswer.sse.subarray(at, at + 37))) out += relay.relay(event);
    }
    for (const event of parser.end()) out += relay.relay(event);
    expect(out).toBe(thinkingAnswer.sse.toString());
    expect(relay.usage()).toEqual(thinkingUsage);
    expect(relay.completed).toBe(true);
    expect(relay.error).toBeUndefined();
  });

  it('notes an error event and a stream cut short', () => {
    const relay = createNativeStreamRelay('claude', noEstimate);
    relay.relay({
      event: 'message_start',
      data: '{"type":"message_start","message":{"usage":{"input_tokens":7,"output_tokens":1}}}',
    });
    const text = relay.relay({
      event: 'error',
      data: '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
    });
    expect(text).toBe(
      'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n',
    );
    expect(relay.error).toMatchObject({ status: 503, code: 'upstream_overloaded' });
    expect(relay.completed).toBe(false);
    expect(relay.usage()).toMatchObject({ promptTokens: 7, completionTokens: 1 });
  });

  it('shows the estimate in place of usage it cannot believe, from that event on, and reports none', () => {
    const shown: number[] = [];
    const relay = createNativeStreamRelay('claude', (characters) => {
      shown.push(characters);
      return { input_tokens: 12, output_tokens: Math.ceil(characters / 4) };
    });
    const dataOf = (text: string) => JSON.parse(text.split('data: ')[1] as string);
    const start = relay.relay({
      event: 'message_start',
      data: '{"type":"message_start","message":{"usage":{"input_tokens":-10,"output_tokens":1}}}',
    });
    expect(dataOf(start).message.usage).toEqual({ input_tokens: 12, output_tokens: 0 });
    relay.relay({
      event: 'content_block_delta',
      data: '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello there"}}',
    });
    // A believable count after an unbelievable one is replaced too: the client never sees two accounts mixed.
    const delta = relay.relay({
      event: 'message_delta',
      data: '{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":3}}',
    });
    expect(dataOf(delta).usage).toEqual({ input_tokens: 12, output_tokens: 3 });
    expect(shown).toEqual([0, 11]);
    expect(relay.generatedCharacters).toBe(11);
    expect(relay.usage()).toBeUndefined();
  });

  it.each([
    { input_tokens: 1.5 },
    { input_tokens: 5, output_tokens: '2' },
    { input_tokens: 5, cache_read_input_tokens: -1 },
    { input_tokens: 2 ** 53 },
  ])('reads no usage from a JSON answer with an unbelievable count: %j', (usage) => {
    expect(nativeMessageUsage(Buffer.from(JSON.stringify({ type: 'message', content: [], usage })))).toBeUndefined();
  });
});
