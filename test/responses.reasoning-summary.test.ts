import { describe, expect, it } from 'vitest';
import { jsonOf } from './support/gateway.js';
import { useGatewayWithMock } from './support/gateway-fixture.js';
import { mockThought } from './support/mock-gemini-upstream.js';
import { parseEvents, postResponses } from './support/responses.js';

/**
 * `reasoning.summary` on /v1/responses through the real gateway to the Anthropic and Gemini mocks: asked of the
 * provider (Claude thinks, Gemini includes its thoughts), its reasoning given as the summary, and the parameter
 * neither named in x-switchboard-dropped-parameters nor refused by a model set to refuse. A chat upstream that cannot
 * be asked still has it left out, or refused.
 */

const refusing = { on_unsupported: 'refuse' };
const setup = useGatewayWithMock({
  providerMocks: ['mock', 'thinking-tools'],
  models: [
    { name: 'claude-refusing', provider: 'claude', upstream_model: 'thinking-tools', parameters: refusing },
    { name: 'gemini-refusing', provider: 'google', upstream_model: 'mock', parameters: refusing },
    { name: 'chat-refusing', provider: 'mock', upstream_model: 'mock', parameters: refusing },
  ],
});

const weatherTool = {
  type: 'function',
  name: 'get_weather',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};
const claudeThinking = 'I should ask the weather tool, "quoted" \u00e9.';

type Item = { type: string; summary?: unknown; encrypted_content?: unknown };

async function answer(body: Record<string, unknown>) {
  const response = await postResponses(setup.gateway, { input: 'Weather in Paris?', store: false, ...body });
  const dropped = response.headers.get('x-switchboard-dropped-parameters') ?? '';
  if (body.stream !== true) return { status: response.status, dropped, body: await jsonOf(response), events: [] };
  const events = parseEvents(await response.text());
  const completed = events.find((event) => event.event === 'response.completed')?.data as Record<string, unknown>;
  return { status: response.status, dropped, body: completed?.response as Record<string, unknown>, events };
}

const reasoningOf = (body: Record<string, unknown>) =>
  (body.output as Item[]).find((item) => item.type === 'reasoning');
const lastClaudeBody = () => setup.providerMocks.anthropic.requests.at(-1)?.body as Record<string, unknown>;
const lastGeminiBody = () => setup.providerMocks.gemini.requests.at(-1)?.body as Record<string, unknown>;

describe('reasoning.summary for a Claude model', () => {
  it.each([false, true])('thinks and gives its thinking as the summary, nothing named (stream: %s)', async (stream) => {
    for (const model of ['claude-thinking-tools', 'claude-refusing']) {
      const result = await answer({ model, tools: [weatherTool], reasoning: { summary: 'auto' }, stream });
      expect(result.status, model).toBe(200);
      expect(result.dropped).not.toContain('reasoning.summary');
      expect(lastClaudeBody().thinking).toEqual({ type: 'enabled', budget_tokens: 2048 });
      expect(reasoningOf(result.body)?.summary).toEqual([{ type: 'summary_text', text: claudeThinking }]);
      if (stream) {
        const types = result.events.map((event) => event.event);
        expect(types).toContain('response.reasoning_summary_text.delta');
      }
    }
  });

  it.each([false, true])(
    'gives an empty summary without one, the signed thinking kept (stream: %s)',
    async (stream) => {
      const result = await answer({
        model: 'claude-refusing',
        tools: [weatherTool],
        reasoning: { effort: 'low' },
        include: ['reasoning.encrypted_content'],
        stream,
      });
      expect(result.status).toBe(200);
      expect(lastClaudeBody().thinking).toEqual({ type: 'enabled', budget_tokens: 1024 });
      const reasoning = reasoningOf(result.body);
      expect(reasoning?.summary).toEqual([]);
      expect(reasoning?.encrypted_content).toMatch(/^sb-thinking-v1\./);
      expect(result.events.some((event) => event.event?.startsWith('response.reasoning_summary'))).toBe(false);
    },
  );

  it('is left out and named when Claude cannot think for the request, or refused by a refusing model', async () => {
    const request = { tools: [weatherTool], reasoning: { effort: 'none', summary: 'auto' } };
    const dropped = await answer({ model: 'claude-thinking-tools', ...request });
    expect(dropped.status).toBe(200);
    expect(dropped.dropped.split(', ')).toContain('reasoning.summary');
    expect(lastClaudeBody()).not.toHaveProperty('thinking');
    const refused = await answer({ model: 'claude-refusing', ...request });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'unsupported_parameter', param: 'reasoning.summary' });
  });
});

describe('reasoning.summary for a Gemini model', () => {
  it.each([false, true])('includes the thoughts and gives them as the summary (stream: %s)', async (stream) => {
    for (const model of ['gemini-mock', 'gemini-refusing']) {
      const result = await answer({ model, reasoning: { summary: 'detailed' }, stream });
      expect(result.status, model).toBe(200);
      expect(result.dropped).not.toContain('reasoning.summary');
      expect(lastGeminiBody().generationConfig).toMatchObject({ thinkingConfig: { includeThoughts: true } });
      expect(reasoningOf(result.body)?.summary).toEqual([{ type: 'summary_text', text: mockThought }]);
    }
    const plain = await answer({ model: 'gemini-refusing', stream });
    expect(lastGeminiBody().generationConfig ?? {}).not.toHaveProperty('thinkingConfig');
    expect(reasoningOf(plain.body)).toBeUndefined();
  });
});

describe('reasoning.summary for a chat upstream', () => {
  it('is still left out and named, or refused by a model set to refuse', async () => {
    const dropped = await answer({ model: 'gpt-4o-mini', reasoning: { summary: 'auto' } });
    expect(dropped.status).toBe(200);
    expect(dropped.dropped.split(', ')).toContain('reasoning.summary');
    const refused = await answer({ model: 'chat-refusing', reasoning: { summary: 'auto' } });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'unsupported_parameter', param: 'reasoning.summary' });
  });
});
