import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { beforeAll, describe, expect, it } from 'vitest';
import { useGatewayWithMock } from '../test/support/gateway-fixture.js';
import type { RecordedRequest } from '../test/support/mock-openai-upstream.js';
import { sendJson } from '../test/support/mock-server.js';

/**
 * Reasoning from OpenAI-compatible servers that call it `reasoning` (OpenRouter, Ollama, Groq, newer vLLM, which for a
 * while sends `reasoning_content` too, with the same text) reaches Anthropic clients as a thinking block and Responses
 * clients as a reasoning item, whole and streamed, once: as it already did for `reasoning_content`.
 */

const usage = { prompt_tokens: 9, completion_tokens: 8, total_tokens: 17 };

/** An answer whose reasoning is in `fields` (one name, or both as vLLM sends them during its rename). */
function reasoner(fields: readonly string[], reportsUsage = true) {
  return (request: RecordedRequest, response: Parameters<typeof sendJson>[0]) => {
    const reasoning = (text: string) => Object.fromEntries(fields.map((field) => [field, text]));
    if (request.body.stream !== true) {
      sendJson(response, 200, {
        id: 'chatcmpl-r',
        object: 'chat.completion',
        created: 1,
        model: 'r',
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: 'It is 4.', ...reasoning('Two and two.') },
            finish_reason: 'stop',
          },
        ],
        usage,
      });
      return;
    }
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    const base = { id: 'chatcmpl-r', object: 'chat.completion.chunk', created: 1, model: 'r' };
    const send = (delta: Record<string, unknown>, finish: string | null = null) =>
      response.write(`data: ${JSON.stringify({ ...base, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`);
    send({ role: 'assistant', ...reasoning('Two and ') });
    send(reasoning('two.'));
    send({ content: 'It is 4.' });
    send({}, 'stop');
    if (reportsUsage) response.write(`data: ${JSON.stringify({ ...base, choices: [], usage })}\n\n`);
    response.end('data: [DONE]\n\n');
  };
}

const setup = useGatewayWithMock({
  upstreamHandlers: {
    'reasoning-field': reasoner(['reasoning']),
    'both-fields': reasoner(['reasoning_content', 'reasoning']),
    'reasoning-no-usage': reasoner(['reasoning'], false),
  },
  models: ['reasoning-field', 'both-fields', 'reasoning-no-usage'].map((name) => ({
    name,
    provider: 'mock',
    upstream_model: name,
  })),
});

let anthropic: Anthropic;
let openai: OpenAI;

beforeAll(() => {
  anthropic = new Anthropic({ baseURL: setup.gateway.url, authToken: setup.gateway.key, apiKey: null, maxRetries: 0 });
  openai = new OpenAI({ baseURL: setup.gateway.baseUrl, apiKey: setup.gateway.key, maxRetries: 0 });
});

const expectedContent = [
  { type: 'thinking', thinking: 'Two and two.', signature: '' },
  { type: 'text', text: 'It is 4.' },
];

describe.each(['reasoning-field', 'both-fields'])('reasoning named as %s upstream', (model) => {
  it('is a thinking block for @anthropic-ai/sdk, whole and streamed', async () => {
    const request = { model, max_tokens: 50, messages: [{ role: 'user' as const, content: '2 + 2?' }] };
    const whole = await anthropic.messages.create(request);
    expect(whole.content).toEqual(expectedContent.map((block) => expect.objectContaining(block)));
    const streamed = await anthropic.messages.stream(request).finalMessage();
    expect(streamed.content).toEqual(expectedContent.map((block) => expect.objectContaining(block)));
  });

  it('is a reasoning item for the openai SDK’s Responses, whole and streamed', async () => {
    // Its text is the summary when one is asked for, as with OpenAI's own models; otherwise the summary is empty and
    // the text is the item's `reasoning_text` content, as the Open Responses schema gives an open model's reasoning.
    const request = { model, input: '2 + 2?', store: false, reasoning: { summary: 'auto' as const } };
    const whole = await openai.responses.create(request);
    const summaries = (response: OpenAI.Responses.Response) =>
      response.output.flatMap((item) => (item.type === 'reasoning' ? item.summary.map((part) => part.text) : []));
    const contents = (response: OpenAI.Responses.Response) =>
      response.output.flatMap((item) =>
        item.type === 'reasoning' ? (item.content ?? []).map((part) => `${part.type}:${part.text}`) : [],
      );
    const unaskedRequest = { model, input: '2 + 2?', store: false };
    for (const unasked of [
      await openai.responses.create(unaskedRequest),
      await openai.responses.stream(unaskedRequest).finalResponse(),
    ]) {
      expect(summaries(unasked)).toEqual([]);
      expect(contents(unasked)).toEqual(['reasoning_text:Two and two.']);
      expect(unasked.output_text).toBe('It is 4.');
    }
    expect(contents(whole)).toEqual([]);
    expect(summaries(whole).join('')).toContain('Two and two.');
    expect(whole.output_text).toBe('It is 4.');
    const streamed = await openai.responses.stream(request).finalResponse();
    expect(summaries(streamed).join('')).toContain('Two and two.');
    expect(summaries(streamed).join('')).not.toContain('Two and two.Two and two.');
  });
});

describe('a stream without usage, whose reasoning is named `reasoning`', () => {
  it('is estimated with its reasoning counted, as generated tokens are', async () => {
    const request = {
      model: 'reasoning-no-usage',
      max_tokens: 50,
      messages: [{ role: 'user' as const, content: '2 + 2?' }],
    };
    const message = await anthropic.messages.stream(request).finalMessage();
    expect(message.content).toEqual(expectedContent.map((block) => expect.objectContaining(block)));
    // About four characters a token over 'Two and two.' and 'It is 4.', not over the text alone.
    expect(message.usage.output_tokens).toBe(Math.ceil('Two and two.It is 4.'.length / 4));
  });
});
