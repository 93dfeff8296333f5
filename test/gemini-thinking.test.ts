import { describe, expect, it } from 'vitest';
import { chatBody, jsonOf, postChat } from './support/gateway.js';
import { useGatewayWithMock } from './support/gateway-fixture.js';
import { mockThought } from './support/mock-gemini-upstream.js';
import { parseEvents, postResponses } from './support/responses.js';
import { readSse } from './support/sse.js';

/**
 * How each Gemini model is asked to think, through the real gateway to the Gemini mock, which refuses a thinkingConfig
 * the named model could not take (as Google does): `reasoning_effort` (and Responses' `reasoning.effort`) becomes a
 * thinking budget within the range of a 2.5 model or a level a Gemini 3 model accepts; a model that does not think is
 * asked nothing, the effort and the thoughts named as dropped (refused, with no upstream call, by a refusing model).
 */

const refusing = { on_unsupported: 'refuse' };
const geminiModels: Array<[string, string, Record<string, unknown>?]> = [
  ['g-flash-25', 'gemini-2.5-flash'],
  ['g-pro-25', 'models/gemini-2.5-pro'],
  ['g-lite-25', 'gemini-2.5-flash-lite-preview-06-17'],
  ['g-pro-3', 'gemini-3-pro-preview'],
  ['g-flash-3', 'gemini-3-flash-preview'],
  ['g-flash-20', 'gemini-2.0-flash'],
  ['g-flash-20-refusing', 'gemini-2.0-flash', refusing],
  ['g-image-25', 'gemini-2.5-flash-image'],
  ['g-thinking-20', 'gemini-2.0-flash-thinking-exp-01-21'],
  ['g-flash-25-none', 'gemini-2.5-flash', { thinking: 'none' }],
  ['g-pro-3-refusing', 'gemini-3-pro-preview', refusing],
];

const setup = useGatewayWithMock({
  providerMocks: ['mock'],
  models: geminiModels.map(([name, upstream, parameters]) => ({
    name,
    provider: 'google',
    upstream_model: upstream,
    ...(parameters ? { parameters } : {}),
  })),
});

const geminiRequests = () => setup.providerMocks.gemini.requests;
const lastThinkingConfig = () =>
  (geminiRequests().at(-1)?.body as { generationConfig?: { thinkingConfig?: unknown } } | undefined)?.generationConfig
    ?.thinkingConfig;
const droppedOf = (response: Response) => response.headers.get('x-switchboard-dropped-parameters')?.split(', ') ?? [];

async function chat(model: string, fields: Record<string, unknown>, stream = false) {
  const response = await postChat(setup.gateway, chatBody(model, { ...fields, ...(stream ? { stream } : {}) }));
  const dropped = droppedOf(response);
  if (!stream || response.status !== 200) return { status: response.status, dropped, body: await jsonOf(response) };
  const chunks = (await readSse(response)).filter((data) => data !== '[DONE]').map((data) => JSON.parse(data));
  const reasoning = chunks.map((chunk) => chunk.choices?.[0]?.delta?.reasoning_content ?? '').join('');
  return { status: response.status, dropped, body: { choices: [{ message: { reasoning_content: reasoning } }] } };
}

describe('chat completions: reasoning_effort for models that think', () => {
  it.each([false, true])('becomes a budget within each 2.5 model’s range (stream: %s)', async (stream) => {
    // What the client could not tell from the effort is named: 2.5 Pro cannot stop thinking, and 2.5 Flash's most is
    // what `high` already asks.
    const cases: Array<[string, string, number, string[]]> = [
      ['g-flash-25', 'low', 1024, []],
      ['g-flash-25', 'high', 24576, []],
      ['g-flash-25', 'xhigh', 24576, ['reasoning_effort=xhigh']],
      ['g-flash-25', 'none', 0, []],
      ['g-pro-25', 'xhigh', 32768, []],
      ['g-pro-25', 'none', 128, ['reasoning_effort=none']],
      ['g-lite-25', 'medium', 8192, []],
      ['g-lite-25', 'none', 0, []],
    ];
    for (const [model, effort, budget, named] of cases) {
      const result = await chat(model, { reasoning_effort: effort }, stream);
      expect(result.status, `${model} ${effort}: ${JSON.stringify(result.body)}`).toBe(200);
      expect(result.dropped, `${model} ${effort}`).toEqual(named);
      expect(lastThinkingConfig()).toEqual({ thinkingBudget: budget });
    }
  });

  it.each([false, true])('becomes a level the Gemini 3 model accepts, or the nearest (stream: %s)', async (stream) => {
    // A level of another name is named, as Claude's xhigh is; the level of the effort's own name is not.
    const cases: Array<[string, string, string, string[]]> = [
      ['g-pro-3', 'minimal', 'low', ['reasoning_effort=minimal']],
      ['g-pro-3', 'medium', 'high', ['reasoning_effort=medium']],
      ['g-pro-3', 'high', 'high', []],
      ['g-pro-3', 'none', 'low', ['reasoning_effort=none']],
      ['g-flash-3', 'minimal', 'minimal', []],
      ['g-flash-3', 'medium', 'medium', []],
      ['g-flash-3', 'xhigh', 'high', ['reasoning_effort=xhigh']],
      ['g-flash-3', 'none', 'minimal', ['reasoning_effort=none']],
    ];
    for (const [model, effort, level, named] of cases) {
      const result = await chat(model, { reasoning_effort: effort }, stream);
      expect(result.status, `${model} ${effort}: ${JSON.stringify(result.body)}`).toBe(200);
      expect(result.dropped, `${model} ${effort}`).toEqual(named);
      expect(lastThinkingConfig()).toEqual({ thinkingLevel: level });
    }
  });

  it('a refusing model answers 400 unsupported_value for an effort it would be given another of', async () => {
    const before = geminiRequests().length;
    const result = await chat('g-pro-3-refusing', { reasoning_effort: 'medium' });
    expect(result.status).toBe(400);
    expect(result.body.error).toMatchObject({ code: 'unsupported_value', param: 'reasoning_effort' });
    expect(geminiRequests().length).toBe(before);
    expect((await chat('g-pro-3-refusing', { reasoning_effort: 'high' })).status).toBe(200);
  });

  it.each([false, true])('comes with the thought summaries when asked for them (stream: %s)', async (stream) => {
    for (const model of ['g-flash-25', 'g-pro-3', 'g-thinking-20']) {
      const result = await chat(model, { reasoning_effort: 'low', include_reasoning: true }, stream);
      expect(result.status, model).toBe(200);
      expect(result.dropped).toEqual(model === 'g-thinking-20' ? ['reasoning_effort'] : []);
      expect(result.body.choices[0].message.reasoning_content).toBe(mockThought);
    }
    expect(lastThinkingConfig()).toEqual({ includeThoughts: true });
  });

  it('an effort no one defines is dropped and named, as before', async () => {
    const result = await chat('g-flash-25', { reasoning_effort: 'max' });
    expect(result.status).toBe(200);
    expect(result.dropped).toEqual(['reasoning_effort']);
    expect(lastThinkingConfig()).toBeUndefined();
  });
});

describe('chat completions: models that do not think', () => {
  it.each([false, true])('are asked nothing; the effort and the thoughts are named (stream: %s)', async (stream) => {
    for (const model of ['g-flash-20', 'g-image-25', 'g-flash-25-none']) {
      const result = await chat(model, { reasoning_effort: 'high', include_reasoning: true }, stream);
      expect(result.status, `${model}: ${JSON.stringify(result.body)}`).toBe(200);
      expect(result.dropped.sort()).toEqual(['include_reasoning', 'reasoning_effort']);
      expect(lastThinkingConfig()).toBeUndefined();
    }
  });

  it('effort none asks nothing of them: left out without a word', async () => {
    const result = await chat('g-flash-20-refusing', { reasoning_effort: 'none' });
    expect(result.status).toBe(200);
    expect(result.dropped).toEqual([]);
    expect(lastThinkingConfig()).toBeUndefined();
  });

  it('a refusing model answers 400 unsupported_parameter, without calling the upstream', async () => {
    for (const [field, value] of [
      ['reasoning_effort', 'low'],
      ['include_reasoning', true],
    ] as const) {
      const before = geminiRequests().length;
      const result = await chat('g-flash-20-refusing', { [field]: value });
      expect(result.status).toBe(400);
      expect(result.body.error).toMatchObject({ code: 'unsupported_parameter', param: field });
      expect(geminiRequests().length).toBe(before);
    }
  });

  it('a model that thinks by itself names the effort it cannot be asked', async () => {
    const result = await chat('g-thinking-20', { reasoning_effort: 'high' });
    expect(result.status).toBe(200);
    expect(result.dropped).toEqual(['reasoning_effort']);
    expect(lastThinkingConfig()).toBeUndefined();
  });

  it('a model whose thinking is not known keeps today’s behaviour', async () => {
    const result = await chat('gemini-mock', { reasoning_effort: 'low', include_reasoning: true });
    expect(result.status).toBe(200);
    expect(result.dropped).toEqual(['reasoning_effort']);
    expect(lastThinkingConfig()).toEqual({ includeThoughts: true });
  });
});

type Item = { type: string; summary?: unknown };

async function respond(body: Record<string, unknown>) {
  const response = await postResponses(setup.gateway, { input: 'Say hello', store: false, ...body });
  const dropped = droppedOf(response);
  if (body.stream !== true || response.status !== 200) {
    return { status: response.status, dropped, body: await jsonOf(response) };
  }
  const events = parseEvents(await response.text());
  const completed = events.find((event) => event.event === 'response.completed')?.data;
  return { status: response.status, dropped, body: completed?.response };
}

const summaryOf = (body: { output: Item[] }) => body.output.find((item) => item.type === 'reasoning')?.summary;

describe('/v1/responses: reasoning.effort', () => {
  it.each([false, true])('asks each model the way it takes (stream: %s)', async (stream) => {
    const cases: Array<[string, string, unknown, string[]]> = [
      ['g-flash-25', 'high', { thinkingBudget: 24576 }, []],
      ['g-pro-25', 'none', { thinkingBudget: 128 }, ['reasoning.effort=none']],
      ['g-pro-3', 'medium', { thinkingLevel: 'high' }, ['reasoning.effort=medium']],
      ['g-flash-3', 'minimal', { thinkingLevel: 'minimal' }, []],
    ];
    for (const [model, effort, thinkingConfig, named] of cases) {
      const result = await respond({ model, reasoning: { effort }, stream });
      expect(result.status, `${model} ${effort}: ${JSON.stringify(result.body)}`).toBe(200);
      expect(result.dropped).toEqual(named);
      expect(lastThinkingConfig()).toEqual(thinkingConfig);
    }
  });

  it.each([false, true])('with a summary, the thoughts are the summary (stream: %s)', async (stream) => {
    const result = await respond({ model: 'g-flash-3', reasoning: { effort: 'low', summary: 'auto' }, stream });
    expect(result.status).toBe(200);
    expect(result.dropped).toEqual([]);
    expect(lastThinkingConfig()).toEqual({ thinkingLevel: 'low', includeThoughts: true });
    expect(summaryOf(result.body)).toEqual([{ type: 'summary_text', text: mockThought }]);
  });

  it.each([false, true])('a model that does not think: effort and summary named (stream: %s)', async (stream) => {
    const result = await respond({ model: 'g-flash-20', reasoning: { effort: 'low', summary: 'auto' }, stream });
    expect(result.status, JSON.stringify(result.body)).toBe(200);
    expect(result.dropped.sort()).toEqual(['reasoning.effort', 'reasoning.summary']);
    expect(lastThinkingConfig()).toBeUndefined();
  });

  it('a refusing model that does not think answers 400, without calling the upstream', async () => {
    for (const reasoning of [{ effort: 'low' }, { summary: 'auto' }]) {
      const before = geminiRequests().length;
      const result = await respond({ model: 'g-flash-20-refusing', reasoning });
      expect(result.status).toBe(400);
      expect(result.body.error.code).toBe('unsupported_parameter');
      expect(result.body.error.param).toMatch(/^reasoning/);
      expect(geminiRequests().length).toBe(before);
    }
    const none = await respond({ model: 'g-flash-20-refusing', reasoning: { effort: 'none' } });
    expect(none.status).toBe(200);
    expect(none.dropped).toEqual([]);
  });
});

describe('the Gemini mock refuses what Google refuses, so the tests above prove something', () => {
  const ask = (model: string, thinkingConfig: Record<string, unknown>) =>
    fetch(`${setup.providerMocks.gemini.baseUrl}/models/${model}:generateContent`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-goog-api-key': 'k' },
      body: JSON.stringify({
        contents: [{ role: 'user', parts: [{ text: 'hi' }] }],
        generationConfig: { thinkingConfig },
      }),
    });

  it.each([
    ['gemini-2.0-flash', { includeThoughts: true }, 400],
    ['gemma-3-27b-it', { thinkingBudget: 1024 }, 400],
    ['gemini-2.5-flash-image', { includeThoughts: true }, 400],
    ['gemini-2.5-pro', { thinkingBudget: 0 }, 400],
    ['gemini-2.5-pro', { thinkingBudget: 64 }, 400],
    ['gemini-2.5-pro', { thinkingBudget: 32768 }, 200],
    ['gemini-2.5-flash', { thinkingBudget: 24577 }, 400],
    ['gemini-2.5-flash', { thinkingBudget: 0 }, 200],
    ['gemini-2.5-flash', { thinkingBudget: -1 }, 200],
    ['gemini-2.5-flash-lite', { thinkingBudget: 256 }, 400],
    ['gemini-2.5-flash', { thinkingLevel: 'low' }, 400],
    ['gemini-3-pro-preview', { thinkingLevel: 'medium' }, 400],
    ['gemini-3-pro-preview', { thinkingLevel: 'minimal' }, 400],
    ['gemini-3-pro-preview', { thinkingLevel: 'low', thinkingBudget: 1024 }, 400],
    ['gemini-3-flash-preview', { thinkingLevel: 'minimal' }, 200],
    ['gemini-2.0-flash-thinking-exp', { includeThoughts: true }, 200],
    ['mock', { thinkingLevel: 'anything' }, 200],
  ])('%s %j: %i', async (model, thinkingConfig, status) => {
    const response = await ask(model, thinkingConfig);
    expect(response.status).toBe(status);
    if (status === 400) expect((await jsonOf(response)).error.status).toBe('INVALID_ARGUMENT');
  });
});
