import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accumulate, parseEvents } from '../support/anthropic-events.js';
import {
  type MockAnthropicUpstream,
  signThinking,
  startMockAnthropicUpstream,
  thinkingAnswer,
} from '../support/mock-anthropic-upstream.js';

/** The mock refuses what Anthropic refuses, so pass-through and translation tests against it mean something. */

let mock: MockAnthropicUpstream;
const key = 'sk-ant-right';

beforeAll(async () => {
  mock = await startMockAnthropicUpstream({ apiKey: key });
});
afterAll(async () => {
  await mock.close();
});

async function post(body: unknown, headers: Record<string, string> = {}, path = '/v1/messages') {
  const response = await fetch(`${mock.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'x-api-key': key, ...headers },
    body: JSON.stringify(body),
  });
  return { status: response.status, bytes: Buffer.from(await response.arrayBuffer()) };
}

async function problem(body: unknown, headers: Record<string, string> = {}) {
  const { status, bytes } = await post(body, headers);
  return { status, ...(status === 200 ? {} : JSON.parse(bytes.toString()).error) };
}

const call = { type: 'tool_use', id: 'toolu_1', name: 'f', input: {} };
const result = { type: 'tool_result', tool_use_id: 'toolu_1', content: 'ok' };
const body = (messages: unknown[], extra = {}) => ({ model: 'mock', max_tokens: 50, messages, ...extra });

describe('the Anthropic mock upstream', () => {
  it('refuses thinking a Claude model does not take, as the API does', async () => {
    const ask = (model: string, extra: Record<string, unknown>) =>
      problem({ ...body([{ role: 'user', content: 'hi' }], extra), model, max_tokens: 4000 });
    const enabled = { thinking: { type: 'enabled', budget_tokens: 2000 } };
    const adaptive = { thinking: { type: 'adaptive' } };
    expect(await ask('claude-opus-4-7', enabled)).toMatchObject({ status: 400, type: 'invalid_request_error' });
    expect((await ask('claude-opus-4-7', enabled)).message).toContain('"thinking.type.enabled" is not supported');
    expect((await ask('claude-fable-5', enabled)).status).toBe(400);
    expect((await ask('claude-opus-4-7', adaptive)).status).toBe(200);
    expect((await ask('claude-opus-4-6', enabled)).status).toBe(200);
    // Claude Opus 4's dated id is not Opus 4.20: it takes budgeted thinking.
    expect((await ask('claude-opus-4-20250514', enabled)).status).toBe(200);
    expect((await ask('claude-opus-4-10', enabled)).status).toBe(400);
    expect((await ask('claude-sonnet-4-5', adaptive)).status).toBe(400);
    expect((await ask('claude-3-5-sonnet-20241022', enabled)).status).toBe(400);
    expect((await ask('claude-3-5-sonnet-20241022', { output_config: { effort: 'low' } })).status).toBe(400);
    expect((await ask('claude-3-5-sonnet-20241022', { thinking: { type: 'disabled' } })).status).toBe(200);
    const xhigh = { ...adaptive, output_config: { effort: 'xhigh' } };
    expect((await ask('claude-opus-4-6', xhigh)).status).toBe(400);
    expect((await ask('claude-opus-4-7', xhigh)).status).toBe(200);
    expect((await ask('thinking-tools', adaptive)).status).toBe(200);
  });

  it('refuses disabled where thinking cannot stop, and an effort where a budget model lacks it', async () => {
    const ask = (model: string, extra: Record<string, unknown>) =>
      problem({ ...body([{ role: 'user', content: 'hi' }], extra), model, max_tokens: 4000 });
    const disabled = { thinking: { type: 'disabled' } };
    expect((await ask('claude-mythos-preview', disabled)).message).toContain(
      '"thinking.type.disabled" is not supported',
    );
    expect((await ask('claude-fable-5', disabled)).status).toBe(400);
    expect((await ask('claude-opus-5-5', disabled)).status).toBe(400);
    expect((await ask('claude-opus-4-7', disabled)).status).toBe(200);
    expect((await ask('claude-opus-5', disabled)).status).toBe(200);
    const disabledAtXhigh = { ...disabled, output_config: { effort: 'xhigh' } };
    expect((await ask('claude-opus-5', disabledAtXhigh)).status).toBe(400);
    expect((await ask('claude-opus-4-8', disabledAtXhigh)).status).toBe(200);
    const effort = { output_config: { effort: 'low' } };
    expect((await ask('claude-sonnet-4-5-20250929', effort)).message).toContain('does not support the effort');
    expect((await ask('claude-opus-4-1', effort)).status).toBe(400);
    expect((await ask('claude-opus-4-5', effort)).status).toBe(200);
    expect((await ask('claude-opus-4-6', effort)).status).toBe(200);
  });

  it('refuses sampling at other than its default where the model takes none, in the API words', async () => {
    const ask = (model: string, extra: Record<string, unknown>) =>
      problem({ ...body([{ role: 'user', content: 'hi' }], extra), model, max_tokens: 4000 });
    expect(await ask('claude-opus-4-7', { temperature: 0.2 })).toMatchObject({
      status: 400,
      type: 'invalid_request_error',
      message: '`temperature` is deprecated for this model.',
    });
    expect((await ask('claude-sonnet-5', { top_p: 0.9 })).message).toBe('`top_p` is deprecated for this model.');
    expect((await ask('claude-haiku-5-5', { top_k: 40 })).message).toBe('`top_k` is deprecated for this model.');
    for (const model of ['claude-opus-4-8', 'claude-opus-5-5', 'claude-sonnet-5-5', 'claude-fable-5-1']) {
      expect((await ask(model, { temperature: 0 })).status).toBe(400);
    }
    expect((await ask('anthropic.claude-mythos-preview-v1:0', { temperature: 0.5 })).status).toBe(400);
    // The defaults are taken, as Anthropic's migration guides say.
    expect((await ask('claude-opus-4-7', { temperature: 1, top_p: 1 })).status).toBe(200);
    for (const model of ['claude-opus-4-6', 'claude-sonnet-4-5', 'claude-haiku-4-5', 'claude-opus-4-20250514']) {
      expect((await ask(model, { temperature: 0.2 })).status).toBe(200);
    }
  });

  it('takes summarized or omitted thinking display, nothing else', async () => {
    const ask = (display: string) =>
      problem({
        ...body([{ role: 'user', content: 'hi' }]),
        model: 'claude-opus-4-7',
        max_tokens: 4000,
        thinking: { type: 'adaptive', display },
      });
    expect((await ask('omitted')).status).toBe(200);
    expect((await ask('summarized')).status).toBe(200);
    expect((await ask('none')).status).toBe(400);
  });

  it('refuses a budget under 1024 tokens or not under max_tokens, for any model', async () => {
    const ask = (budget: number, maxTokens: number, model = 'mock') =>
      problem({
        ...body([{ role: 'user', content: 'hi' }]),
        model,
        max_tokens: maxTokens,
        thinking: { type: 'enabled', budget_tokens: budget },
      });
    expect((await ask(1000, 4000)).message).toBe(
      'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024',
    );
    expect((await ask(4000, 4000, 'claude-sonnet-4-5')).message).toContain(
      '`max_tokens` must be greater than `thinking.budget_tokens`',
    );
    expect((await ask(1024, 1025)).status).toBe(200);
  });

  it('checks the headers Anthropic checks', async () => {
    const ok = body([{ role: 'user', content: 'hi' }]);
    expect((await problem(ok, { 'anthropic-version': '' })).status).toBe(400);
    expect(await problem(ok, { 'x-api-key': 'sk-ant-wrong' })).toEqual({
      status: 401,
      type: 'authentication_error',
      message: 'invalid x-api-key',
    });
    expect((await post(ok, {}, '/v1/messages?beta=true')).status).toBe(200);
  });

  it('combines consecutive turns of one role and lets an assistant turn come first, as the API does', async () => {
    expect(
      (
        await problem(
          body([
            { role: 'assistant', content: 'Earlier answer' },
            { role: 'user', content: 'a' },
            { role: 'user', content: 'b' },
          ]),
        )
      ).status,
    ).toBe(200);
  });

  it('pairs tool results with the tool calls of the turn before, results first', async () => {
    expect(
      (
        await problem(
          body([
            { role: 'user', content: 'q' },
            { role: 'assistant', content: [call] },
            { role: 'user', content: [result] },
          ]),
        )
      ).status,
    ).toBe(200);
    expect(
      (
        await problem(
          body([
            { role: 'user', content: 'q' },
            { role: 'assistant', content: [call] },
            { role: 'user', content: 'no result' },
          ]),
        )
      ).message,
    ).toMatch(/^messages\.2: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1\./);
    expect((await problem(body([{ role: 'user', content: [result] }]))).message).toMatch(
      /unexpected `tool_use_id` found in `tool_result` blocks: toolu_1/,
    );
    expect(
      (
        await problem(
          body([
            { role: 'user', content: 'q' },
            { role: 'assistant', content: [call] },
            { role: 'user', content: [{ type: 'text', text: 'first' }, result] },
          ]),
        )
      ).message,
    ).toMatch(/`tool_result` blocks must come before any other content/);
  });

  it('refuses a thinking block whose signature it did not issue', async () => {
    const turn = (signature: string) =>
      body([
        { role: 'user', content: 'q' },
        { role: 'assistant', content: [{ type: 'thinking', thinking: 'hmm', signature }, call] },
        { role: 'user', content: [result] },
      ]);
    expect((await problem(turn('forged'))).message).toBe('messages.1.content: Invalid `signature` in `thinking` block');
    expect((await problem(turn(signThinking('hmm')))).status).toBe(200);
  });

  it('still refuses a missing max_tokens, system roles and empty content', async () => {
    expect((await problem({ model: 'mock', messages: [{ role: 'user', content: 'hi' }] })).message).toBe(
      'max_tokens: Field required',
    );
    expect((await problem(body([{ role: 'system', content: 'x' }]))).status).toBe(400);
    expect((await problem(body([{ role: 'user', content: [] }]))).status).toBe(400);
    expect(
      (
        await problem(
          body([
            { role: 'user', content: 'q' },
            { role: 'assistant', content: [] },
          ]),
        )
      ).status,
    ).toBe(200);
  });

  it('answers the thinking model with its recorded answer, byte for byte, as JSON and as a stream', async () => {
    const json = await post(body([{ role: 'user', content: 'cafés?' }], { model: 'thinking' }));
    expect(json.bytes.equals(thinkingAnswer.json)).toBe(true);
    const sse = await post(body([{ role: 'user', content: 'cafés?' }], { model: 'thinking', stream: true }));
    expect(sse.bytes.equals(thinkingAnswer.sse)).toBe(true);
    // Both are one answer, and its signature is one the mock accepts back.
    const message = JSON.parse(thinkingAnswer.json.toString());
    expect(accumulate(parseEvents(thinkingAnswer.sse.toString())).content).toEqual(message.content);
    const thinking = message.content[0];
    expect(thinking.signature).toBe(signThinking(thinking.thinking));
  });

  it('thinks before its tool calls (thinking-tools, thinking on), and wants that thinking back for the results', async () => {
    const weather = { name: 'get_weather', input_schema: { type: 'object' } };
    const question = body([{ role: 'user', content: 'Weather?' }], {
      model: 'thinking-tools',
      max_tokens: 2048,
      tools: [weather],
      thinking: { type: 'enabled', budget_tokens: 1024 },
    });
    const json = JSON.parse((await post(question)).bytes.toString());
    const streamed = accumulate(parseEvents((await post({ ...question, stream: true })).bytes.toString()));
    expect(streamed.content).toEqual(json.content);
    expect(json.content.map((block: { type: string }) => block.type)).toEqual([
      'thinking',
      'redacted_thinking',
      'text',
      'tool_use',
    ]);
    const answer = (assistant: unknown[]) => ({
      ...question,
      messages: [
        ...question.messages,
        { role: 'assistant', content: assistant },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_mock_1', content: '18 C' }] },
      ],
    });
    expect((await problem(answer(json.content))).status).toBe(200);
    expect((await problem(answer(json.content.slice(2)))).message).toMatch(
      /^messages\.1\.content\.0\.type: Expected `thinking` or `redacted_thinking`, but found `text`/,
    );
    // Without thinking, it answers as `tools` does.
    const plain = JSON.parse((await post({ ...question, thinking: undefined })).bytes.toString());
    expect(plain.content.map((block: { type: string }) => block.type)).toEqual(['text', 'tool_use']);
  });

  it('counts tokens', async () => {
    const { status, bytes } = await post(
      { model: 'claude', messages: [{ role: 'user', content: 'hello' }] },
      {},
      '/v1/messages/count_tokens',
    );
    expect(status).toBe(200);
    expect(JSON.parse(bytes.toString()).input_tokens).toBeGreaterThan(0);
  });
});
