import { describe, expect, it } from 'vitest';
import { accumulate, parseEvents as parseMessagesEvents } from './support/anthropic-events.js';
import { chatBody, jsonOf, postChat, postV1 } from './support/gateway.js';
import { useGatewayWithMock } from './support/gateway-fixture.js';
import { respondTo } from './support/responses.js';

/**
 * Each Claude model asked to think the way it can, through the real gateway to the Anthropic mock, which refuses as
 * the real API does (`enabled` on Opus 4.7, `adaptive` on Sonnet 4.5, any thinking on Claude 3.5, `xhigh` on Opus
 * 4.6): chat's `reasoning_effort`, Responses' `reasoning`, and Anthropic's own `thinking` on /v1/messages. A model
 * that cannot think (by its name, or `parameters.thinking: none` for any provider) has what asks for reasoning left
 * out and named under the client's own field, or refused before anything is sent.
 */

const refusing = { on_unsupported: 'refuse' };
const setup = useGatewayWithMock({
  providerMocks: [],
  models: [
    { name: 'opus-47', provider: 'claude', upstream_model: 'claude-opus-4-7' },
    { name: 'opus-46', provider: 'claude', upstream_model: 'claude-opus-4-6' },
    { name: 'opus-46-refusing', provider: 'claude', upstream_model: 'claude-opus-4-6', parameters: refusing },
    { name: 'sonnet-45', provider: 'claude', upstream_model: 'claude-sonnet-4-5-20250929' },
    { name: 'mythos', provider: 'claude', upstream_model: 'claude-mythos-preview' },
    { name: 'mythos-refusing', provider: 'claude', upstream_model: 'claude-mythos-preview', parameters: refusing },
    { name: 'opus-5', provider: 'claude', upstream_model: 'claude-opus-5' },
    { name: 'sonnet-35', provider: 'claude', upstream_model: 'claude-3-5-sonnet-20241022' },
    {
      name: 'sonnet-35-refusing',
      provider: 'claude',
      upstream_model: 'claude-3-5-sonnet-20241022',
      parameters: refusing,
    },
    { name: 'gpt-none', provider: 'mock', upstream_model: 'mock', parameters: { thinking: 'none' } },
    {
      name: 'gpt-none-refusing',
      provider: 'mock',
      upstream_model: 'mock',
      parameters: { thinking: 'none', ...refusing },
    },
  ],
});

const claudeBody = () => setup.providerMocks.anthropic.requests.at(-1)?.body as Record<string, unknown>;
const claudeCalls = () => setup.providerMocks.anthropic.requests.length;
const droppedOf = (response: Response) => response.headers.get('x-switchboard-dropped-parameters');

async function chat(model: string, extra: Record<string, unknown>) {
  const response = await postChat(setup.gateway, chatBody(model, extra));
  const dropped = droppedOf(response);
  if (extra.stream !== true) return { status: response.status, dropped, body: await jsonOf(response), reasoning: '' };
  const text = await response.text();
  let reasoning = '';
  for (const line of text.split('\n')) {
    if (!line.startsWith('data: {')) continue;
    const delta = JSON.parse(line.slice(6)).choices?.[0]?.delta;
    if (typeof delta?.reasoning_content === 'string') reasoning += delta.reasoning_content;
  }
  return { status: response.status, dropped, body: undefined, reasoning };
}

describe('chat completions', () => {
  it.each([false, true])('asks Opus 4.7 to think adaptively, its thinking summarized (stream: %s)', async (stream) => {
    const result = await chat('opus-47', { reasoning_effort: 'high', stream });
    expect(result.status).toBe(200);
    expect(result.dropped).toBeNull();
    expect(claudeBody().thinking).toEqual({ type: 'adaptive', display: 'summarized' });
    expect(claudeBody().output_config).toEqual({ effort: 'high' });
    const reasoning = stream ? result.reasoning : result.body.choices[0].message.reasoning_content;
    expect(reasoning).toBe('Thinking about: Say hello');
  });

  it('gives minimal as low, xhigh as xhigh where the model has it', async () => {
    expect((await chat('opus-47', { reasoning_effort: 'minimal' })).status).toBe(200);
    expect(claudeBody().output_config).toEqual({ effort: 'low' });
    expect((await chat('opus-47', { reasoning_effort: 'xhigh' })).status).toBe(200);
    expect(claudeBody().output_config).toEqual({ effort: 'xhigh' });
  });

  it.each([false, true])('sends high for xhigh to Opus 4.6 and names it (stream: %s)', async (stream) => {
    const result = await chat('opus-46', { reasoning_effort: 'xhigh', stream });
    expect(result.status).toBe(200);
    expect(result.dropped).toBe('reasoning_effort=xhigh');
    expect(claudeBody().output_config).toEqual({ effort: 'high' });
  });

  it('refuses xhigh for a model set to refuse, before calling upstream', async () => {
    const before = claudeCalls();
    const result = await chat('opus-46-refusing', { reasoning_effort: 'xhigh' });
    expect(result.status).toBe(400);
    expect(result.body.error).toMatchObject({ code: 'unsupported_value', param: 'reasoning_effort' });
    expect(claudeCalls()).toBe(before);
  });

  it('keeps Sonnet 4.5 on a budget', async () => {
    expect((await chat('sonnet-45', { reasoning_effort: 'high' })).status).toBe(200);
    expect(claudeBody().thinking).toEqual({ type: 'enabled', budget_tokens: 4096 });
    expect(claudeBody()).not.toHaveProperty('output_config');
  });

  it("makes Anthropic's own enabled thinking adaptive for Opus 4.7", async () => {
    const result = await chat('opus-47', { thinking: { type: 'enabled', budget_tokens: 1500 }, max_tokens: 3000 });
    expect(result.status).toBe(200);
    expect(claudeBody().thinking).toEqual({ type: 'adaptive' });
    expect(claudeBody().output_config).toEqual({ effort: 'low' });
  });

  it.each([false, true])('leaves reasoning out for Claude 3.5, named (stream: %s)', async (stream) => {
    const result = await chat('sonnet-35', { reasoning_effort: 'high', stream });
    expect(result.status).toBe(200);
    expect(result.dropped).toBe('reasoning_effort');
    expect(claudeBody()).not.toHaveProperty('thinking');
    const thinking = await chat('sonnet-35', { thinking: { type: 'enabled', budget_tokens: 2000 } });
    expect(thinking.status).toBe(200);
    expect(thinking.dropped).toBe('thinking');
    expect(claudeBody()).not.toHaveProperty('thinking');
  });

  it('honours effort none silently, and refuses reasoning for a Claude 3.5 set to refuse', async () => {
    const none = await chat('sonnet-35-refusing', { reasoning_effort: 'none' });
    expect(none.status).toBe(200);
    expect(none.dropped).toBeNull();
    const before = claudeCalls();
    const refused = await chat('sonnet-35-refusing', { reasoning_effort: 'low' });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'unsupported_parameter', param: 'reasoning_effort' });
    expect(claudeCalls()).toBe(before);
  });

  it.each([false, true])('sends effort none as low where thinking cannot stop, named (stream: %s)', async (stream) => {
    const result = await chat('mythos', { reasoning_effort: 'none', stream });
    expect(result.status).toBe(200);
    expect(result.dropped).toBe('reasoning_effort=none');
    // The client asked for no reasoning: the thinking the model cannot help is asked for without its text.
    expect(claudeBody().thinking).toEqual({ type: 'adaptive', display: 'omitted' });
    expect(claudeBody().output_config).toEqual({ effort: 'low' });
    expect(stream ? result.reasoning : result.body.choices[0].message.reasoning_content).toBeFalsy();
    if (!stream) {
      expect(result.body.choices[0].message.content).toBe('Echo: Say hello');
      // The signed block, without text, is still there for a tool loop to send back.
      expect(result.body.choices[0].message.thinking_blocks[0]).toMatchObject({ type: 'thinking', thinking: '' });
      expect(result.body.choices[0].message.thinking_blocks[0].signature).toEqual(expect.any(String));
    }
    const opus = await chat('opus-5', { reasoning_effort: 'none', stream });
    expect(opus.status).toBe(200);
    expect(opus.dropped).toBeNull();
    expect(claudeBody().thinking).toEqual({ type: 'disabled' });
  });

  it('refuses effort none where thinking cannot stop, for a model set to refuse', async () => {
    const before = claudeCalls();
    const result = await chat('mythos-refusing', { reasoning_effort: 'none' });
    expect(result.status).toBe(400);
    expect(result.body.error).toMatchObject({ code: 'unsupported_value', param: 'reasoning_effort' });
    expect(claudeCalls()).toBe(before);
  });

  it("refuses a client's budget Anthropic would refuse, and gives it room when no limit was set", async () => {
    const before = claudeCalls();
    const over = await chat('sonnet-45', { max_tokens: 1500, thinking: { type: 'enabled', budget_tokens: 2000 } });
    expect(over.status).toBe(400);
    expect(over.body.error.message).toContain('`max_tokens` must be greater than `thinking.budget_tokens`');
    expect(claudeCalls()).toBe(before);
    const roomy = await chat('sonnet-45', { thinking: { type: 'enabled', budget_tokens: 6000 } });
    expect(roomy.status).toBe(200);
    expect(claudeBody().max_tokens).toBe(6000 + 4096);
  });

  it('leaves reasoning out for any model configured thinking: none, or refuses it', async () => {
    const result = await chat('gpt-none', { reasoning_effort: 'high', include_reasoning: true });
    expect(result.status).toBe(200);
    expect(result.dropped?.split(', ').sort()).toEqual(['include_reasoning', 'reasoning_effort']);
    const sent = setup.mock.requests.at(-1)?.body as Record<string, unknown>;
    expect(sent).not.toHaveProperty('reasoning_effort');
    expect(sent).not.toHaveProperty('include_reasoning');
    const before = setup.mock.requests.length;
    const refused = await chat('gpt-none-refusing', { reasoning_effort: 'high' });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'unsupported_parameter', param: 'reasoning_effort' });
    expect(setup.mock.requests.length).toBe(before);
  });
});

const respond = (body: Record<string, unknown>) => respondTo(setup.gateway, body);

const summaryOf = (body: Record<string, unknown>) =>
  (body.output as Array<{ type: string; summary?: unknown }>).find((item) => item.type === 'reasoning')?.summary;

describe('responses', () => {
  it.each([false, true])('asks Opus 4.7 adaptively, its thinking the summary (stream: %s)', async (stream) => {
    const result = await respond({ model: 'opus-47', reasoning: { effort: 'medium', summary: 'auto' }, stream });
    expect(result.status).toBe(200);
    expect(result.dropped).toBeNull();
    expect(claudeBody().thinking).toEqual({ type: 'adaptive', display: 'summarized' });
    expect(claudeBody().output_config).toEqual({ effort: 'medium' });
    expect(summaryOf(result.body)).toEqual([{ type: 'summary_text', text: 'Thinking about: Say hello' }]);
  });

  it.each([false, true])("names Codex's reasoning for Claude 3.5 as Codex sent it (stream: %s)", async (stream) => {
    const result = await respond({
      model: 'sonnet-35',
      reasoning: { effort: 'high', summary: 'auto' },
      include: ['reasoning.encrypted_content'],
      stream,
    });
    expect(result.status).toBe(200);
    expect(result.dropped?.split(', ').sort()).toEqual([
      'include.reasoning.encrypted_content',
      'reasoning.effort',
      'reasoning.summary',
    ]);
    expect(claudeBody()).not.toHaveProperty('thinking');
  });

  it('refuses, naming the Responses field, for models set to refuse', async () => {
    const before = claudeCalls();
    const effort = await respond({ model: 'sonnet-35-refusing', reasoning: { effort: 'high' } });
    expect(effort.status).toBe(400);
    expect(effort.body.error).toMatchObject({ code: 'unsupported_parameter', param: 'reasoning.effort' });
    expect(effort.body.error.message).toContain("'reasoning.effort'");
    const summary = await respond({ model: 'sonnet-35-refusing', reasoning: { summary: 'auto' } });
    expect(summary.status).toBe(400);
    expect(summary.body.error).toMatchObject({ code: 'unsupported_parameter', param: 'reasoning.summary' });
    const xhigh = await respond({ model: 'opus-46-refusing', reasoning: { effort: 'xhigh' } });
    expect(xhigh.status).toBe(400);
    expect(xhigh.body.error).toMatchObject({ code: 'unsupported_value', param: 'reasoning.effort' });
    expect(claudeCalls()).toBe(before);
  });

  it('names the replaced effort as reasoning.effort', async () => {
    const result = await respond({ model: 'opus-46', reasoning: { effort: 'xhigh' } });
    expect(result.status).toBe(200);
    expect(result.dropped).toBe('reasoning.effort=xhigh');
    expect(claudeBody().output_config).toEqual({ effort: 'high' });
  });

  it.each([false, true])(
    'names effort none, sent as low where thinking cannot stop, as reasoning.effort, with no reasoning item (stream: %s)',
    async (stream) => {
      const result = await respond({ model: 'mythos', reasoning: { effort: 'none' }, stream });
      expect(result.status).toBe(200);
      expect(result.dropped).toBe('reasoning.effort=none');
      expect(claudeBody().thinking).toEqual({ type: 'adaptive', display: 'omitted' });
      expect(claudeBody().output_config).toEqual({ effort: 'low' });
      const output = result.body.output as Array<{ type: string }>;
      expect(output.map((item) => item.type)).toEqual(['message']);
    },
  );

  it('leaves the summary out for a chat model configured thinking: none', async () => {
    const result = await respond({ model: 'gpt-none', reasoning: { effort: 'low', summary: 'auto' } });
    expect(result.status).toBe(200);
    expect(result.dropped?.split(', ').sort()).toEqual(['reasoning.effort', 'reasoning.summary']);
  });
});

function postMessages(body: Record<string, unknown>, path = 'messages') {
  return postV1(setup.gateway, path, body, { headers: { 'anthropic-version': '2023-06-01' } });
}

const hello = (model: string, extra: Record<string, unknown> = {}) => ({
  model,
  max_tokens: 4000,
  messages: [{ role: 'user', content: 'Say hello' }],
  ...extra,
});

async function message(body: Record<string, unknown>) {
  const response = await postMessages(body);
  const dropped = droppedOf(response);
  if (body.stream !== true) return { status: response.status, dropped, body: await jsonOf(response) };
  return { status: response.status, dropped, body: accumulate(parseMessagesEvents(await response.text())) };
}

describe('messages', () => {
  it.each([false, true])('makes enabled thinking adaptive for Opus 4.7 (stream: %s)', async (stream) => {
    const result = await message(hello('opus-47', { thinking: { type: 'enabled', budget_tokens: 3000 }, stream }));
    expect(result.status).toBe(200);
    expect(result.dropped).toBeNull();
    expect(claudeBody().thinking).toEqual({ type: 'adaptive' });
    expect(claudeBody().output_config).toEqual({ effort: 'medium' });
    expect(result.body.content[0]).toMatchObject({ type: 'thinking' });
  });

  it.each([false, true])('gives Sonnet 4.5 a budget for adaptive thinking (stream: %s)', async (stream) => {
    const result = await message(
      hello('sonnet-45', { thinking: { type: 'adaptive' }, output_config: { effort: 'medium' }, stream }),
    );
    expect(result.status).toBe(200);
    expect(result.dropped).toBeNull();
    expect(claudeBody().thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
    // Sonnet 4.5 refuses the effort: it went into the budget.
    expect(claudeBody()).not.toHaveProperty('output_config');
  });

  it('leaves out an effort Sonnet 4.5 refuses beside a budget, named', async () => {
    const result = await message(
      hello('sonnet-45', { thinking: { type: 'enabled', budget_tokens: 2000 }, output_config: { effort: 'low' } }),
    );
    expect(result.status).toBe(200);
    expect(result.dropped).toBe('output_config.effort');
    expect(claudeBody()).not.toHaveProperty('output_config');
  });

  it.each([false, true])(
    'sends disabled as adaptive at low where thinking cannot stop, named (stream: %s)',
    async (stream) => {
      const result = await message(hello('mythos', { thinking: { type: 'disabled' }, stream }));
      expect(result.status).toBe(200);
      expect(result.dropped).toBe('thinking.type=disabled');
      expect(claudeBody().thinking).toEqual({ type: 'adaptive', display: 'omitted' });
      expect(claudeBody().output_config).toEqual({ effort: 'low' });
    },
  );

  it('keeps Opus 5 from thinking beside xhigh by sending high, named', async () => {
    const result = await message(
      hello('opus-5', { thinking: { type: 'disabled' }, output_config: { effort: 'xhigh' } }),
    );
    expect(result.status).toBe(200);
    expect(result.dropped).toBe('output_config.effort=xhigh');
    expect(claudeBody().thinking).toEqual({ type: 'disabled' });
    expect(claudeBody().output_config).toEqual({ effort: 'high' });
  });

  it('refuses disabled where thinking cannot stop for a model set to refuse, in Anthropic terms', async () => {
    const before = claudeCalls();
    const response = await postMessages(hello('mythos-refusing', { thinking: { type: 'disabled' } }));
    expect(response.status).toBe(400);
    const body = await jsonOf(response);
    expect(body.type).toBe('error');
    expect(body.error).toMatchObject({ type: 'invalid_request_error' });
    expect(body.error.message).toContain("'thinking.type' does not support 'disabled'");
    expect(claudeCalls()).toBe(before);
  });

  it.each([
    [500, 4000, 'budget_tokens: Input should be greater than or equal to 1024'],
    [4000, 4000, '`max_tokens` must be greater than `thinking.budget_tokens`'],
  ])(
    'refuses a budget of %i under max_tokens %i as Anthropic does, before calling upstream',
    async (budget, maxTokens, words) => {
      const before = claudeCalls();
      const response = await postMessages(
        hello('sonnet-45', { max_tokens: maxTokens, thinking: { type: 'enabled', budget_tokens: budget } }),
      );
      expect(response.status).toBe(400);
      const body = await jsonOf(response);
      expect(body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
      expect(body.error.message).toContain(words);
      expect(claudeCalls()).toBe(before);
    },
  );

  it.each([false, true])('leaves thinking out for Claude 3.5, named (stream: %s)', async (stream) => {
    const result = await message(hello('sonnet-35', { thinking: { type: 'enabled', budget_tokens: 2000 }, stream }));
    expect(result.status).toBe(200);
    expect(result.dropped).toBe('thinking');
    expect(claudeBody()).not.toHaveProperty('thinking');
  });

  it('refuses thinking for a Claude 3.5 set to refuse, in Anthropic terms, before calling upstream', async () => {
    const before = claudeCalls();
    const response = await postMessages(
      hello('sonnet-35-refusing', { thinking: { type: 'enabled', budget_tokens: 2000 } }),
    );
    expect(response.status).toBe(400);
    const body = await jsonOf(response);
    expect(body.type).toBe('error');
    expect(body.error.message).toContain('thinking');
    expect(claudeCalls()).toBe(before);
  });

  it('sends high for xhigh to Opus 4.6, named', async () => {
    const result = await message(
      hello('opus-46', { thinking: { type: 'adaptive' }, output_config: { effort: 'xhigh' } }),
    );
    expect(result.status).toBe(200);
    expect(result.dropped).toBe('output_config.effort=xhigh');
    expect(claudeBody().output_config).toEqual({ effort: 'high' });
  });

  it('counts tokens with the thinking the model takes', async () => {
    const response = await postMessages(
      {
        model: 'opus-47',
        messages: [{ role: 'user', content: 'Hi' }],
        thinking: { type: 'enabled', budget_tokens: 2000 },
      },
      'messages/count_tokens',
    );
    expect(response.status).toBe(200);
    expect(claudeBody().thinking).toEqual({ type: 'adaptive' });
  });
});
