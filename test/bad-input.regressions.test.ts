import { describe, expect, it } from 'vitest';
import { jsonOf, postChat } from './support/gateway.js';
import { useGatewayWithMock } from './support/gateway-fixture.js';
import { waitFor } from './support/wait.js';

/**
 * Plain regressions for what the generated bad-input tests found (bad-input.*.generated.test.ts), each failing without
 * its fix.
 */

const setup = useGatewayWithMock({ providerMocks: ['mock'] });

const upstreamCalls = () =>
  [setup.mock, setup.providerMocks.anthropic, setup.providerMocks.gemini].reduce(
    (sum, mock) => sum + mock.requests.length,
    0,
  );

describe('a tool result that answers no tool call of the message before it', () => {
  it.each(['claude-mock', 'gemini-mock', 'gpt-4o-mini'])(
    'is refused for %s by the gateway, naming the client’s field, without calling the upstream',
    async (model) => {
      const before = upstreamCalls();
      const response = await postChat(setup.gateway, {
        model,
        messages: [
          { role: 'system', content: 'be brief' },
          { role: 'user', content: 'Weather?' },
          { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
        ],
      });
      expect(response.status).toBe(400);
      // Anthropic's own refusal named `messages.0.content` of the translated request, with no param; an
      // OpenAI-compatible upstream answered with its own 400 (OpenAI's), or not at all. Now one refusal for every route.
      const { error } = await jsonOf(response);
      expect(error).toEqual({
        message:
          "Invalid 'messages[2].tool_call_id': a message with role 'tool' must answer a tool call of the assistant message before it; 'call_1' is none of its 'tool_calls'.",
        type: 'invalid_request_error',
        param: 'messages[2].tool_call_id',
        code: 'invalid_value',
      });
      expect(upstreamCalls()).toBe(before);
    },
  );

  it('is taken when it answers a call of the assistant message before it (results first in the user turn)', async () => {
    const response = await postChat(setup.gateway, {
      model: 'claude-mock',
      messages: [
        { role: 'user', content: 'Weather?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{}' } }],
        },
        { role: 'user', content: 'and quickly' },
        { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
      ],
    });
    expect(response.status).toBe(200);
    const sent = setup.providerMocks.anthropic.requests.at(-1)?.body.messages;
    expect(sent.at(-1).content[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'call_1' });
  });
});

describe('/v1/messages: a message with nothing in it', () => {
  const post = (path: string, body: unknown) =>
    fetch(`${setup.gateway.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${setup.gateway.key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });

  it.each([
    ['gemini-mock', '/v1/messages'],
    ['gpt-4o-mini', '/v1/messages'],
    ['claude-mock', '/v1/messages/count_tokens'],
  ])('is refused for %s on %s in Anthropic’s words, before any upstream', async (model, path) => {
    const cases: [unknown[], string][] = [
      [[{ role: 'user', content: [] }], 'messages.0: all messages must have non-empty content'],
      [
        [
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: '' },
          { role: 'user', content: 'again' },
        ],
        'messages.1: all messages must have non-empty content',
      ],
      [[{ role: 'user', content: [{ type: 'text', text: '' }] }], 'messages.0: text content blocks must be non-empty'],
    ];
    for (const [messages, start] of cases) {
      const before = upstreamCalls();
      const response = await post(path, { model, max_tokens: 20, messages });
      expect(response.status).toBe(400);
      // Gemini's own refusal ("GenerateContentRequest.contents: contents is not specified") told of a request the
      // client never wrote.
      const body = await jsonOf(response);
      expect(body.type).toBe('error');
      expect(body.error.message.startsWith(start)).toBe(true);
      expect(upstreamCalls()).toBe(before);
    }
  });

  it('takes an empty final assistant turn (a prefill) on a translated route', async () => {
    const response = await post('/v1/messages', {
      model: 'gpt-4o-mini',
      max_tokens: 20,
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: '' },
      ],
    });
    expect(response.status).toBe(200);
  });
});

describe('/v1/messages: a tool_result answering no tool_use of the assistant turn before it', () => {
  it.each([
    ['gemini-mock', '/v1/messages'],
    ['gpt-4o-mini', '/v1/messages'],
    ['gpt-4o-mini', '/v1/messages/count_tokens'],
  ])('is refused for %s on %s in Anthropic’s words and paths, before any upstream', async (model, path) => {
    const before = upstreamCalls();
    const response = await fetch(`${setup.gateway.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${setup.gateway.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model,
        max_tokens: 20,
        system: 'be brief',
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'f', input: {} }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'y' }] },
          { role: 'assistant', content: 'ok' },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'again' }] },
        ],
      }),
    });
    expect(response.status).toBe(400);
    // Through Gemini it was "Invalid 'messages[5].tool_call_id'", a path of the translated chat request; through an
    // OpenAI-compatible upstream it was answered as if nothing were wrong.
    const body = await jsonOf(response);
    expect(body.error.message).toBe(
      'messages.4.content: unexpected `tool_use_id` found in `tool_result` blocks: toolu_1. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.',
    );
    expect(upstreamCalls()).toBe(before);
  });
});

describe('/v1/messages: what a translated model’s provider refuses', () => {
  it.each([false, true])(
    'is named by the client’s Messages path at the start of the message, not the chat request’s (stream: %s)',
    async (stream) => {
      const before = upstreamCalls();
      const response = await fetch(`${setup.gateway.url}/v1/messages`, {
        method: 'POST',
        headers: { authorization: `Bearer ${setup.gateway.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'gemini-mock',
          max_tokens: 20,
          stream,
          system: 'be brief',
          messages: [
            { role: 'user', content: 'hi' },
            { role: 'assistant', content: 'hello' },
            {
              role: 'user',
              content: [
                { type: 'text', text: 'what is this?' },
                { type: 'image', source: { type: 'url', url: 'ftp://example.com/cat.png' } },
              ],
            },
          ],
        }),
      });
      expect(response.status).toBe(400);
      // Gemini's adapter refused "Invalid 'messages[3].content[1].image_url.url'": the system prompt made message 3
      // of the chat request, and image_url is no field of a Messages request.
      const body = await jsonOf(response);
      expect(body.error.message).toBe(
        'messages.2.content.1.source: an image URL that is not http(s) or base64 cannot be sent to this model (served by a gemini provider).',
      );
      expect(upstreamCalls()).toBe(before);
    },
  );
});

describe('/v1/responses: a NUL character where PostgreSQL text cannot hold one', () => {
  it('is a 404 for a response id or previous_response_id that holds one, not a failed query', async () => {
    const retrieved = await fetch(`${setup.gateway.baseUrl}/responses/resp_%00`, {
      headers: { authorization: `Bearer ${setup.gateway.key}` },
    });
    expect([retrieved.status, (await jsonOf(retrieved)).error.code]).toEqual([404, 'response_not_found']);
    const continued = await postChatLike('/responses', {
      model: 'gpt-4o-mini',
      previous_response_id: 'resp_\u0000',
      input: 'hi',
    });
    expect([continued.status, (await jsonOf(continued)).error.code]).toEqual([404, 'previous_response_not_found']);
    expect(setup.gateway.logLines.filter((line) => line.includes('unexpected error'))).toEqual([]);
  });

  it('stores a response whose input items carry such an id (the id is kept, only not referable)', async () => {
    const created = await postChatLike('/responses', {
      model: 'gpt-4o-mini',
      input: [{ type: 'message', id: 'msg_\u0000x', role: 'user', content: 'Say hi' }],
    });
    expect(created.status).toBe(200);
    const { id } = await jsonOf(created);
    const items = await waitFor('the response stored', async () => {
      const response = await fetch(`${setup.gateway.baseUrl}/responses/${id}/input_items`, {
        headers: { authorization: `Bearer ${setup.gateway.key}` },
      });
      return response.status === 200 && jsonOf(response);
    });
    expect(items.data[0].id).toBe('msg_\u0000x');
    expect(setup.gateway.logLines.filter((line) => line.includes('storing a response failed'))).toEqual([]);
  });
});

function postChatLike(path: string, body: unknown) {
  return fetch(`${setup.gateway.baseUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${setup.gateway.key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}
