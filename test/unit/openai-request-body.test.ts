import { describe, expect, it } from 'vitest';
import type { ChatCompletionRequest } from '../../src/openai/types.js';
import { buildOpenAiChatBody } from '../../src/providers/openai/build-request.js';
import type { ProviderCall } from '../../src/providers/provider.js';

/** A call as dispatch makes it: the parsed request, and the client's bytes when they may be forwarded. */
function callFor(text: string, upstreamModel?: string, forwardable = true): ProviderCall {
  const request = JSON.parse(text) as ChatCompletionRequest;
  return {
    request,
    model: { upstreamModel: upstreamModel ?? request.model } as ProviderCall['model'],
    timeouts: {} as ProviderCall['timeouts'],
    signal: {} as ProviderCall['signal'],
    ...(forwardable ? { body: Buffer.from(text) } : {}),
  };
}

const parsed = (body: string | Buffer) => JSON.parse(body.toString());

describe('the upstream body of an OpenAI-compatible provider', () => {
  it('is the client bytes themselves when nothing must change', () => {
    const call = callFor('{"model":"m","messages":[{"role":"user","content":"hi"}]}');
    expect(buildOpenAiChatBody(call)).toBe(call.body);
  });

  it('asks for usage on a stream by adding stream_options to the client bytes, the rest as sent', () => {
    const texts = [
      '{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}',
      // Whitespace, a multi-byte prompt, escapes and a brace inside a string, members after messages.
      ' {\n  "model": "m",\n  "messages": [{"role": "user", "content": "héllo 😀 \\"}\\" }"}],\n  "stream": true\n}\n\t',
    ];
    for (const text of texts) {
      const body = buildOpenAiChatBody(callFor(text));
      expect(Buffer.isBuffer(body)).toBe(true);
      expect(parsed(body)).toEqual({ ...JSON.parse(text), stream_options: { include_usage: true } });
      // The client's own bytes come first, unchanged.
      expect(body.toString().startsWith(text.trimEnd().slice(0, -1))).toBe(true);
    }
  });

  it('serializes the request again when the bytes cannot simply be extended', () => {
    const cases: Array<[ProviderCall, object]> = [
      // The client asked for stream_options without usage: its other options are kept, usage turned on.
      [
        callFor('{"model":"m","stream":true,"stream_options":{"include_usage":false},"messages":[]}'),
        { model: 'm', stream: true, stream_options: { include_usage: false }, messages: [] },
      ],
      // stream_options: null is a member already; a second one would be a duplicate name.
      [callFor('{"model":"m","stream":true,"stream_options":null,"messages":[]}'), {}],
      // Another upstream name for the model.
      [callFor('{"model":"m","stream":true,"messages":[]}', 'm-2024'), {}],
      // Bytes that may not be forwarded (a member named twice, for example).
      [callFor('{"model":"m","stream":true,"messages":[]}', undefined, false), {}],
    ];
    for (const [call] of cases) {
      const body = buildOpenAiChatBody(call);
      expect(typeof body).toBe('string');
      const expected = {
        ...call.request,
        model: call.model.upstreamModel,
        stream_options: { ...(call.request.stream_options ?? {}), include_usage: true },
      };
      expect(parsed(body)).toEqual(expected);
    }
  });
});
