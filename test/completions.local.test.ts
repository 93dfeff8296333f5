import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { getLlama, LlamaLogLevel, type Token } from 'node-llama-cpp';
import { afterAll, describe, expect, it } from 'vitest';
import { jsonOf, postV1, waitForLogRows } from './support/gateway.js';
import { useGatewayWithMock } from './support/gateway-fixture.js';
import { readSse } from './support/sse.js';
import { tinyTokenCount, writeTinyGguf } from './support/tiny-gguf.js';

/**
 * Legacy POST /v1/completions served natively by the local model on generated tiny GGUFs (one token per character,
 * so token counts and offsets follow from the text): the raw prompt without a chat template, max_tokens 16 by
 * default, stop sequences cut where they begin (also in a stream), echo, and logprobs checked against
 * node-llama-cpp's own probabilities.
 */

let directory: string;
let tinyFile: string;

// Registered before the fixture, so it runs after the gateway closed (afterAll hooks run in reverse).
afterAll(() => {
  rmSync(directory, { recursive: true, force: true });
});

const setup = useGatewayWithMock(() => {
  directory = mkdtempSync(path.join(tmpdir(), 'switchboard-text-'));
  tinyFile = path.join(directory, 'tiny.gguf');
  const endsTurns = path.join(directory, 'tiny-ends-turns.gguf');
  writeTinyGguf(tinyFile);
  writeTinyGguf(endsTurns, { endOfTurnLike: 'e' });
  return {
    providers: [
      { name: 'tiny', type: 'local', model_path: tinyFile, max_concurrent: 1, context_size: 128, threads: 1 },
      { name: 'tiny-ends-turns', type: 'local', model_path: endsTurns, max_concurrent: 1, threads: 1 },
    ],
    models: [
      { name: 'tiny-text', provider: 'tiny', pricing: { input: 1, output: 2 } },
      { name: 'tiny-ends-turns', provider: 'tiny-ends-turns' },
    ],
  };
});

function postCompletions(body: Record<string, unknown>, signal?: AbortSignal) {
  return postV1(setup.gateway, 'completions', { model: 'tiny-text', ...body }, { signal });
}

async function complete(body: Record<string, unknown>) {
  const response = await postCompletions(body);
  const json = await jsonOf(response);
  if (response.status !== 200) throw new Error(`HTTP ${response.status}: ${JSON.stringify(json)}`);
  return json;
}

async function streamed(body: Record<string, unknown>) {
  const events = await readSse(await postCompletions({ ...body, stream: true }));
  expect(events.at(-1)).toBe('[DONE]');
  // biome-ignore lint/suspicious/noExplicitAny: chunks are asserted on freely
  return events.slice(0, -1).map((event) => JSON.parse(event) as any);
}

const prompt = 'The quick brown fox';

describe('local legacy completions', () => {
  it('continues the raw prompt, 16 tokens by default, with exact usage', async () => {
    const body = await complete({ prompt, temperature: 0 });
    expect(body).toMatchObject({ object: 'text_completion', model: 'tiny-text' });
    expect(body.id).toMatch(/^cmpl-[0-9a-f]{32}$/);
    expect(body.choices).toHaveLength(1);
    expect(body.choices[0]).toMatchObject({ index: 0, logprobs: null, finish_reason: 'length' });
    expect(tinyTokenCount(body.choices[0].text)).toBe(16);
    // No chat template around the prompt: its tokens are its characters.
    expect(body.usage).toMatchObject({
      prompt_tokens: tinyTokenCount(prompt),
      completion_tokens: 16,
      total_tokens: 35,
    });
    expect((await complete({ prompt, temperature: 0 })).choices[0].text).toBe(body.choices[0].text);
  });

  it('takes token ids as it takes the text they spell, and several prompts', async () => {
    const text = await complete({ prompt: 'Hello', temperature: 0, max_tokens: 6 });
    const ids = [...'Hello'].map((character) => character.charCodeAt(0) - 0x21 + 262);
    expect((await complete({ prompt: ids, temperature: 0, max_tokens: 6 })).choices[0].text).toBe(text.choices[0].text);
    const many = await complete({ prompt: ['Hello', prompt], temperature: 0, max_tokens: 6 });
    expect(many.choices.map((choice: { index: number }) => choice.index)).toEqual([0, 1]);
    expect(many.choices[0].text).toBe(text.choices[0].text);
    expect(many.usage.prompt_tokens).toBe(5 + tinyTokenCount(prompt));
  });

  it('ends where a stop sequence begins, leaving it out, and says stop', async () => {
    const full = (await complete({ prompt, temperature: 0, max_tokens: 16 })).choices[0].text as string;
    const stop = full.slice(6, 8);
    const cut = await complete({ prompt, temperature: 0, max_tokens: 16, stop: ['\u0000never', stop] });
    expect(cut.choices[0]).toMatchObject({ text: full.slice(0, full.indexOf(stop)), finish_reason: 'stop' });
    const chunks = await streamed({ prompt, temperature: 0, max_tokens: 16, stop });
    expect(chunks.map((chunk) => chunk.choices[0]?.text ?? '').join('')).toBe(full.slice(0, full.indexOf(stop)));
    expect(chunks.at(-1).choices[0].finish_reason).toBe('stop');
  });

  it('says stop when the model ends its text', async () => {
    const body = await complete({ model: 'tiny-ends-turns', prompt: 'Tell me', max_tokens: 50, temperature: 0 });
    expect(body.choices[0].finish_reason).toBe('stop');
    expect(body.choices[0].text).not.toContain('e');
    expect(body.usage.completion_tokens).toBe(tinyTokenCount(body.choices[0].text) + 1);
  });

  it('echoes the prompt before the completion', async () => {
    const full = (await complete({ prompt, temperature: 0, max_tokens: 3 })).choices[0].text;
    expect((await complete({ prompt, temperature: 0, max_tokens: 3, echo: true })).choices[0].text).toBe(prompt + full);
    const none = await complete({ prompt, max_tokens: 0 });
    expect(none.choices[0]).toMatchObject({ text: '', finish_reason: 'length' });
    expect(none.usage.completion_tokens).toBe(0);
  });

  it("scores an echoed prompt with node-llama-cpp's own probabilities", async () => {
    const body = await complete({ prompt: 'Hello there', echo: true, logprobs: 2, max_tokens: 0 });
    const logprobs = body.choices[0].logprobs;
    expect(body.choices[0].text).toBe('Hello there');
    expect(logprobs.tokens).toEqual([...'Hello there']);
    expect(logprobs.text_offset).toEqual([...'Hello there'].map((_, index) => index));
    expect(logprobs.token_logprobs[0]).toBeNull();
    expect(logprobs.top_logprobs[0]).toBeNull();
    const llama = await getLlama({ build: 'never', gpu: false, logLevel: LlamaLogLevel.error });
    try {
      const model = await llama.loadModel({ modelPath: tinyFile });
      const context = await model.createContext({ contextSize: 128, threads: 1 });
      const tokens = model.tokenize('Hello there', true);
      const outputs = await context
        .getSequence()
        .controlledEvaluate(
          tokens.map((token): [Token, { generateNext: { probabilities: true } }] => [
            token,
            { generateNext: { probabilities: true } },
          ]),
        );
      for (let index = 1; index < tokens.length; index++) {
        const probability = outputs[index - 1]?.next.probabilities?.get(tokens[index] as Token) as number;
        expect(logprobs.token_logprobs[index]).toBeCloseTo(Math.log(probability), 4);
        const top = Object.values(logprobs.top_logprobs[index] as Record<string, number>);
        expect(top).toHaveLength(2);
        const [best] = outputs[index - 1]?.next.probabilities?.values() ?? [];
        expect(Math.max(...top)).toBeCloseTo(Math.log(best as number), 4);
      }
    } finally {
      await llama.dispose();
    }
  });

  it('gives greedy tokens the top logprob, with offsets continuing after the echo, whole and streamed', async () => {
    const body = await complete({ prompt: 'Hi', echo: true, logprobs: 1, max_tokens: 4, temperature: 0 });
    const logprobs = body.choices[0].logprobs;
    expect(logprobs.tokens).toHaveLength(6);
    expect(logprobs.text_offset).toEqual([0, 1, 2, 3, 4, 5]);
    for (let index = 2; index < 6; index++) {
      const [top] = Object.values(logprobs.top_logprobs[index] as Record<string, number>);
      expect(logprobs.token_logprobs[index]).toBe(top);
    }
    const chunks = await streamed({ prompt: 'Hi', echo: true, logprobs: 1, max_tokens: 4, temperature: 0 });
    const textChunks = chunks.filter((chunk) => chunk.choices[0]?.text);
    expect(textChunks.map((chunk) => chunk.choices[0].text).join('')).toBe(body.choices[0].text);
    expect(textChunks.flatMap((chunk) => chunk.choices[0].logprobs.text_offset)).toEqual(logprobs.text_offset);
    expect(textChunks.flatMap((chunk) => chunk.choices[0].logprobs.token_logprobs)).toEqual(logprobs.token_logprobs);
  });

  it('streams the text, with usage only when asked for', async () => {
    const whole = (await complete({ prompt, temperature: 0, max_tokens: 8 })).choices[0].text;
    const chunks = await streamed({ prompt, temperature: 0, max_tokens: 8 });
    expect(chunks.every((chunk) => chunk.object === 'text_completion' && chunk.usage === undefined)).toBe(true);
    expect(chunks.map((chunk) => chunk.choices[0]?.text ?? '').join('')).toBe(whole);
    expect(chunks.at(-1).choices[0].finish_reason).toBe('length');
    const withUsage = await streamed({ prompt, max_tokens: 8, stream_options: { include_usage: true } });
    expect(withUsage.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 19, completion_tokens: 8 } });
  });

  it('logs the usage with its cost', async () => {
    const response = await postCompletions({ prompt: 'abc', max_tokens: 5 });
    const [row] = await waitForLogRows(setup.gateway, [response.headers.get('x-request-id') as string]);
    expect(row).toMatchObject({ provider: 'tiny', prompt_tokens: 3, completion_tokens: 5, usage_estimated: 0 });
    expect(row?.cost_usd).toBeCloseTo((3 * 1 + 5 * 2) / 1_000_000, 15);
  });

  it('refuses what the local model cannot do, naming the parameter', async () => {
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [{ prompt, n: 2 }, 'n', 'unsupported_parameter'],
      [{ prompt, best_of: 3 }, 'best_of', 'unsupported_parameter'],
      [{ prompt, suffix: 'end' }, 'suffix', 'unsupported_parameter'],
      [{ prompt: 'x'.repeat(600) }, 'prompt', 'context_length_exceeded'],
      [{ prompt: [1, 2, 999_999] }, 'prompt[2]', 'invalid_value'],
      [{ prompt: '' }, 'prompt', 'invalid_value'],
    ];
    for (const [body, param, code] of cases) {
      const response = await postCompletions(body);
      expect(response.status, JSON.stringify(body).slice(0, 60)).toBe(400);
      expect((await jsonOf(response)).error).toMatchObject({ param, code });
    }
  });

  it('stops generating when the client goes away, freeing the slot', async () => {
    const controller = new AbortController();
    const response = await postCompletions({ prompt, max_tokens: 100, stream: true }, controller.signal);
    const reader = response.body?.getReader();
    await reader?.read();
    controller.abort();
    // The provider has one slot: the next request is served only once the abandoned one let go of it.
    const next = await complete({ prompt, max_tokens: 2 });
    expect(next.choices[0].text).toHaveLength(2);
  });
});
