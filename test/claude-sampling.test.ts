import { describe, expect, it } from 'vitest';
import { chatBody, jsonOf, postChat, postV1 } from './support/gateway.js';
import { useGatewayWithMock } from './support/gateway-fixture.js';
import { respondTo } from './support/responses.js';

/**
 * The Claude models that take no sampling (Opus 4.7 and later, Sonnet 5 and later, Haiku 5.5, Mythos, Fable), through
 * the real gateway to the Anthropic mock, which refuses a temperature, top_p or top_k other than the default as the
 * real API does (`` `temperature` is deprecated for this model. ``): the parameters are left out and named in
 * `x-switchboard-dropped-parameters`, or refused for a model configured to refuse; at their default they go silently;
 * older models still get them; and a temperature that is not sent does not keep Claude from thinking. A Messages
 * request forwarded to such a model (its client may have written it for another) has them left out the same way.
 */

const setup = useGatewayWithMock({
  providerMocks: [],
  models: [
    { name: 'opus-47', provider: 'claude', upstream_model: 'claude-opus-4-7' },
    { name: 'opus-47-dated', provider: 'claude', upstream_model: 'anthropic.claude-opus-4-7-20260416-v1:0' },
    { name: 'sonnet-5', provider: 'claude', upstream_model: 'claude-sonnet-5' },
    { name: 'haiku-55', provider: 'claude', upstream_model: 'claude-haiku-5-5' },
    { name: 'fable', provider: 'claude', upstream_model: 'claude-fable-5-1' },
    {
      name: 'opus-47-refusing',
      provider: 'claude',
      upstream_model: 'claude-opus-4-7',
      parameters: { on_unsupported: 'refuse' },
    },
    { name: 'opus-46', provider: 'claude', upstream_model: 'claude-opus-4-6' },
    { name: 'sonnet-45', provider: 'claude', upstream_model: 'claude-sonnet-4-5-20250929' },
    {
      name: 'opus-46-no-temperature',
      provider: 'claude',
      upstream_model: 'claude-opus-4-6',
      parameters: { unsupported: ['temperature'] },
    },
  ],
});

const claudeBody = () => setup.providerMocks.anthropic.requests.at(-1)?.body as Record<string, unknown>;
const claudeCalls = () => setup.providerMocks.anthropic.requests.length;
const droppedOf = (response: Response) => response.headers.get('x-switchboard-dropped-parameters');

async function chat(model: string, extra: Record<string, unknown>) {
  const response = await postChat(setup.gateway, chatBody(model, extra));
  const text = await response.text();
  return { status: response.status, dropped: droppedOf(response), text, body: extra.stream ? {} : JSON.parse(text) };
}

const respond = (body: Record<string, unknown>) => respondTo(setup.gateway, body);

describe('chat completions', () => {
  it.each([false, true])('leaves a temperature out for Opus 4.7, named (stream: %s)', async (stream) => {
    const result = await chat('opus-47', { temperature: 0.2, stream });
    expect(result.status).toBe(200);
    expect(result.dropped).toBe('temperature');
    expect(claudeBody()).not.toHaveProperty('temperature');
    if (!stream) expect(result.body.choices[0].message.content).toBe('Echo: Say hello');
  });

  it.each(['sonnet-5', 'haiku-55', 'fable', 'opus-47-dated'])(
    'leaves top_p and top_k out for %s, named',
    async (model) => {
      const result = await chat(model, { temperature: 0.5, top_p: 0.9, top_k: 40 });
      expect(result.status).toBe(200);
      expect(result.dropped?.split(', ').sort()).toEqual(['temperature', 'top_k', 'top_p']);
      for (const name of ['temperature', 'top_p', 'top_k']) expect(claudeBody()).not.toHaveProperty(name);
    },
  );

  it('leaves out the defaults LangChain sends (temperature 1, top_p 1) without a word: they ask for nothing', async () => {
    const result = await chat('opus-47', { temperature: 1, top_p: 1 });
    expect(result.status).toBe(200);
    expect(result.dropped).toBeNull();
    expect(claudeBody()).not.toHaveProperty('temperature');
    expect(claudeBody()).not.toHaveProperty('top_p');
  });

  it('refuses a temperature for a model set to refuse, naming it, before calling upstream', async () => {
    const before = claudeCalls();
    const result = await chat('opus-47-refusing', { temperature: 0.2 });
    expect(result.status).toBe(400);
    expect(result.body.error).toMatchObject({
      type: 'invalid_request_error',
      code: 'unsupported_parameter',
      param: 'temperature',
    });
    expect(claudeCalls()).toBe(before);
    // The default asks for nothing, so even a refusing model takes it.
    expect((await chat('opus-47-refusing', { temperature: 1 })).status).toBe(200);
  });

  it('still sends sampling to the models that take it', async () => {
    expect((await chat('opus-46', { temperature: 0.2 })).dropped).toBeNull();
    expect(claudeBody().temperature).toBe(0.2);
    const sonnet = await chat('sonnet-45', { top_p: 0.8, top_k: 20 });
    expect(sonnet.dropped).toBeNull();
    expect(claudeBody()).toMatchObject({ top_p: 0.8, top_k: 20 });
  });

  it.each([false, true])('thinks beside a temperature that is not sent (stream: %s)', async (stream) => {
    const result = await chat('opus-47', { temperature: 0.2, reasoning_effort: 'high', stream });
    expect(result.status).toBe(200);
    expect(result.dropped).toBe('temperature');
    expect(claudeBody().thinking).toEqual({ type: 'adaptive', display: 'summarized' });
    expect(claudeBody().output_config).toEqual({ effort: 'high' });
    expect(claudeBody()).not.toHaveProperty('temperature');
  });

  it('thinks beside a temperature the operator configured away', async () => {
    const result = await chat('opus-46-no-temperature', { temperature: 0.2, reasoning_effort: 'medium' });
    expect(result.status).toBe(200);
    expect(result.dropped).toBe('temperature');
    expect(claudeBody().thinking).toEqual({ type: 'adaptive', display: 'summarized' });
    // A model that takes a temperature still has thinking kept from it, as Anthropic refuses both.
    const kept = await chat('opus-46', { temperature: 0.2, reasoning_effort: 'medium' });
    expect(kept.dropped).toBe('reasoning_effort');
    expect(claudeBody()).not.toHaveProperty('thinking');
  });
});

describe('responses', () => {
  it.each([false, true])('leaves temperature and top_p out for Opus 4.7, named (stream: %s)', async (stream) => {
    const result = await respond({ model: 'opus-47', temperature: 0.2, top_p: 0.5, stream });
    expect(result.status).toBe(200);
    expect(result.dropped?.split(', ').sort()).toEqual(['temperature', 'top_p']);
    expect(claudeBody()).not.toHaveProperty('temperature');
    expect(claudeBody()).not.toHaveProperty('top_p');
  });

  it('refuses a temperature for a model set to refuse', async () => {
    const before = claudeCalls();
    const result = await respond({ model: 'opus-47-refusing', temperature: 0.2 });
    expect(result.status).toBe(400);
    expect(result.body.error).toMatchObject({ code: 'unsupported_parameter', param: 'temperature' });
    expect(claudeCalls()).toBe(before);
  });

  it('shows the reasoning summary beside a temperature that is not sent', async () => {
    const result = await respond({ model: 'opus-47', temperature: 0.2, reasoning: { effort: 'low', summary: 'auto' } });
    expect(result.status).toBe(200);
    expect(result.dropped).toBe('temperature');
    expect(claudeBody().thinking).toEqual({ type: 'adaptive', display: 'summarized' });
    const reasoning = (result.body.output as Array<{ type: string; summary?: unknown }>).find(
      (item) => item.type === 'reasoning',
    );
    expect(reasoning?.summary).toEqual([{ type: 'summary_text', text: 'Thinking about: Say hello' }]);
  });
});

describe('messages, forwarded to Anthropic', () => {
  const postMessages = (model: string, extra: Record<string, unknown>) =>
    postV1(
      setup.gateway,
      'messages',
      { model, max_tokens: 4000, messages: [{ role: 'user', content: 'Say hello' }], ...extra },
      { headers: { 'anthropic-version': '2023-06-01' } },
    );

  it.each([false, true])('leaves a temperature out for Opus 4.7, named (stream: %s)', async (stream) => {
    const response = await postMessages('opus-47', { temperature: 0.2, top_k: 10, stream });
    expect(response.status).toBe(200);
    expect(droppedOf(response)).toBe('temperature, top_k');
    await response.text();
    expect(claudeBody()).not.toHaveProperty('temperature');
    expect(claudeBody()).not.toHaveProperty('top_k');
  });

  it('sends the defaults silently, and sampling as it came to a model that takes it', async () => {
    const defaults = await postMessages('fable', { temperature: 1 });
    expect(defaults.status).toBe(200);
    expect(droppedOf(defaults)).toBeNull();
    expect(claudeBody()).not.toHaveProperty('temperature');
    const older = await postMessages('opus-46', { temperature: 0.2 });
    expect(older.status).toBe(200);
    expect(droppedOf(older)).toBeNull();
    expect(claudeBody().temperature).toBe(0.2);
  });

  it('refuses a temperature for a model set to refuse, in Anthropic terms, before calling upstream', async () => {
    const before = claudeCalls();
    const response = await postMessages('opus-47-refusing', { temperature: 0.2 });
    expect(response.status).toBe(400);
    const body = await jsonOf(response);
    expect(body.type).toBe('error');
    expect(body.error).toMatchObject({ type: 'invalid_request_error' });
    expect(body.error.message).toContain("'temperature'");
    expect(claudeCalls()).toBe(before);
  });
});
