import { describe, expect, it } from 'vitest';
import { chatBody, postChat } from './support/gateway.js';
import { useGatewayWithMock } from './support/gateway-fixture.js';
import { parseStrictSse, readStrictSse } from './support/sse.js';

/**
 * The raw SSE framing of the gateway's streams read by the strict reader (test/support/sse.ts), from every provider
 * type (translated from Anthropic's and Gemini's streams or forwarded from an OpenAI-compatible one), and the reader
 * itself: each framing fault it must catch. (The named-event streams of Responses and Messages are read by the same
 * reader in their unit tests, test/support/anthropic-events.ts and responses-stream-events.test.ts.)
 */

const setup = useGatewayWithMock({ providerMocks: true });

describe('SSE framing of chat streams from every provider type', () => {
  for (const model of ['gpt-4o-mini', 'claude-mock', 'gemini-mock']) {
    it(`chat completions from ${model}: data-only frames of JSON, ending with [DONE]`, async () => {
      const response = await postChat(setup.gateway, chatBody(model, { stream: true }));
      expect(response.status).toBe(200);
      const { frames } = await readStrictSse(response);
      expect(frames.at(-1)?.data).toBe('[DONE]');
      expect(frames.length).toBeGreaterThan(2);
      expect(frames.every((frame) => frame.event === undefined)).toBe(true);
    });
  }
});

describe('the strict reader itself', () => {
  const chunk = 'data: {"a":1}\n\n';
  it('accepts what the gateway writes', () => {
    expect(parseStrictSse(`: keepalive\n\n${chunk}data: [DONE]\n\n`)).toMatchObject({
      keepalives: 1,
      keepalivesBeforeFirstEvent: 1,
    });
    expect(parseStrictSse('event: ping\ndata: {"type":"ping"}\n\n', { surface: 'messages' }).frames).toEqual([
      { event: 'ping', data: '{"type":"ping"}' },
    ]);
    expect(parseStrictSse('event: a\ndata: {"type":"a"}\n\ndata: [DONE]\n\n', { surface: 'responses' }).frames).toEqual(
      [
        { event: 'a', data: '{"type":"a"}' },
        { event: undefined, data: '[DONE]' },
      ],
    );
  });

  it.each([
    ['a missing [DONE]', chunk],
    ['an event line on the OpenAI surface', `event: x\n${chunk}data: [DONE]\n\n`],
    ['a comment other than the keepalive', `: hello\n\n${chunk}data: [DONE]\n\n`],
    ['a single newline as the separator', `data: {"a":1}\ndata: {"b":2}\n\ndata: [DONE]\n\n`],
    ['an extra blank line', `${chunk}\ndata: [DONE]\n\n`],
    ['CRLF line ends', 'data: {"a":1}\r\n\r\ndata: [DONE]\r\n\r\n'],
    ['stray bytes', `${chunk}xyz\n\ndata: [DONE]\n\n`],
    ['a cut-off last frame', `${chunk}data: [DONE]\n`],
    ['data that is not JSON', 'data: {"a":\n\ndata: [DONE]\n\n'],
    ['anything after [DONE]', `data: [DONE]\n\n${chunk}`],
  ])('refuses %s', (_, text) => {
    expect(() => parseStrictSse(text)).toThrow(/SSE framing/);
  });

  it.each([
    ['a data-only frame', 'data: {"type":"ping"}\n\n'],
    ['an event name that is not the type', 'event: pong\ndata: {"type":"ping"}\n\n'],
    ['[DONE]', 'event: ping\ndata: {"type":"ping"}\n\ndata: [DONE]\n\n'],
  ])('refuses %s on the messages surface', (_, text) => {
    expect(() => parseStrictSse(text, { surface: 'messages' })).toThrow(/SSE framing/);
  });

  it.each([
    ['a missing [DONE]', 'event: a\ndata: {"type":"a"}\n\n'],
    ['a data-only event', 'data: {"type":"a"}\n\ndata: [DONE]\n\n'],
  ])('refuses %s on the responses surface', (_, text) => {
    expect(() => parseStrictSse(text, { surface: 'responses' })).toThrow(/SSE framing/);
  });
});
