import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { getLlama, LlamaLogLevel } from 'node-llama-cpp';
import { afterAll, describe, expect, it } from 'vitest';
import { jsonOf, postV1, waitForLogRows } from './support/gateway.js';
import { useGatewayWithMock } from './support/gateway-fixture.js';
import { tinyTokenCount, writeTinyGguf } from './support/tiny-gguf.js';

/**
 * POST /v1/embeddings served by the local provider from a generated tiny GGUF that declares mean pooling (what makes
 * a GGUF an embedding model): node-llama-cpp's embedding context, vectors L2-normalized, exact token usage, inputs
 * that cannot fit refused by name, and a chat GGUF refused for embeddings (and the reverse).
 */

let directory: string;
let embeddingFile: string;

// Registered before the fixture, so it runs after the gateway closed (afterAll hooks run in reverse).
afterAll(() => {
  rmSync(directory, { recursive: true, force: true });
});

const setup = useGatewayWithMock(() => {
  directory = mkdtempSync(path.join(tmpdir(), 'switchboard-embed-'));
  embeddingFile = path.join(directory, 'tiny-embed.gguf');
  const chatFile = path.join(directory, 'tiny-chat.gguf');
  writeTinyGguf(embeddingFile, { pooling: 'mean' });
  writeTinyGguf(chatFile);
  return {
    providers: [
      { name: 'tiny-embed', type: 'local', model_path: embeddingFile, context_size: 64, max_concurrent: 2, threads: 1 },
      { name: 'tiny-chat', type: 'local', model_path: chatFile, max_concurrent: 1, threads: 1 },
    ],
    models: [
      {
        name: 'local-embed',
        provider: 'tiny-embed',
        capabilities: ['chat', 'embeddings'],
        pricing: { input: 0.01, output: 0 },
      },
      { name: 'local-chat-as-embed', provider: 'tiny-chat', capabilities: ['embeddings'] },
    ],
  };
});

function postEmbeddings(body: unknown) {
  return postV1(setup.gateway, 'embeddings', body);
}

async function embed(body: Record<string, unknown>) {
  const response = await postEmbeddings({ model: 'local-embed', ...body });
  const json = await jsonOf(response);
  if (response.status !== 200) throw new Error(`HTTP ${response.status}: ${JSON.stringify(json)}`);
  return json;
}

const norm = (vector: number[]) => Math.sqrt(vector.reduce((total, value) => total + value * value, 0));

describe('local embeddings', () => {
  it('says at start-up that the GGUF is an embedding model', () => {
    const loaded = setup.gateway.logLines.find(
      (line) => line.includes('"local model loaded"') && line.includes('"provider":"tiny-embed"'),
    );
    expect(loaded).toContain('"kind":"embedding"');
    expect(loaded).toContain('"dimensions":64');
  });

  it("answers node-llama-cpp's vector for each input, normalized to length 1, with exact usage", async () => {
    const body = await embed({ input: ['hello world', 'goodbye'] });
    expect(body.object).toBe('list');
    expect(body.model).toBe('local-embed');
    expect(body.data).toHaveLength(2);
    expect(body.usage).toEqual({
      prompt_tokens: tinyTokenCount('hello world') + tinyTokenCount('goodbye'),
      total_tokens: tinyTokenCount('hello world') + tinyTokenCount('goodbye'),
    });
    // The same vectors computed here, straight from node-llama-cpp.
    const llama = await getLlama({ build: 'never', gpu: false, logLevel: LlamaLogLevel.error });
    try {
      const model = await llama.loadModel({ modelPath: embeddingFile });
      const context = await model.createEmbeddingContext({ contextSize: 64, threads: 1 });
      for (const [index, text] of ['hello world', 'goodbye'].entries()) {
        const expected = (await context.getEmbeddingFor(text)).vector;
        const length = norm([...expected]);
        const vector = body.data[index].embedding as number[];
        expect(body.data[index].index).toBe(index);
        expect(vector).toHaveLength(64);
        vector.forEach((value, position) => {
          expect(value).toBeCloseTo((expected[position] as number) / length, 6);
        });
        expect(norm(vector)).toBeCloseTo(1, 12);
      }
    } finally {
      await llama.dispose();
    }
  });

  it('embeds token ids as it embeds the text they spell, and base64 as the float32 of the floats', async () => {
    const text = await embed({ input: 'hello' });
    const tokens = await embed({ input: [[...'hello'].map((character) => character.charCodeAt(0) - 0x21 + 262)] });
    expect(tokens.data[0].embedding).toEqual(text.data[0].embedding);
    const base64 = await embed({ input: 'hello', encoding_format: 'base64' });
    const bytes = Buffer.from(base64.data[0].embedding as string, 'base64');
    const decoded = Array.from({ length: bytes.length / 4 }, (_, index) => bytes.readFloatLE(index * 4));
    expect(decoded).toEqual((text.data[0].embedding as number[]).map((value) => Math.fround(value)));
    expect((await embed({ input: 'hello', dimensions: 64 })).data[0].embedding).toEqual(text.data[0].embedding);
  });

  it('logs the usage with its cost', async () => {
    const response = await postEmbeddings({ model: 'local-embed', input: 'twenty characters!!!' });
    const requestId = response.headers.get('x-request-id') as string;
    const [row] = await waitForLogRows(setup.gateway, [requestId]);
    expect(row).toMatchObject({ provider: 'tiny-embed', prompt_tokens: 20, usage_estimated: 0 });
    expect(row?.cost_usd).toBeCloseTo((20 * 0.01) / 1_000_000, 15);
  });

  it('refuses an input longer than the context, a token outside the vocabulary and other dimensions', async () => {
    const long = await postEmbeddings({ model: 'local-embed', input: ['fits', 'x'.repeat(100)] });
    expect(long.status).toBe(400);
    expect((await jsonOf(long)).error).toMatchObject({ code: 'context_length_exceeded', param: 'input[1]' });
    const outside = await postEmbeddings({ model: 'local-embed', input: [1, 2, 100_000] });
    expect(outside.status).toBe(400);
    expect((await jsonOf(outside)).error).toMatchObject({ code: 'invalid_value', param: 'input[2]' });
    const dimensions = await postEmbeddings({ model: 'local-embed', input: 'x', dimensions: 32 });
    expect(dimensions.status).toBe(400);
    expect((await jsonOf(dimensions)).error).toMatchObject({ code: 'unsupported_parameter', param: 'dimensions' });
  });

  it('refuses embeddings from a chat GGUF and chat from an embedding GGUF, saying which it is', async () => {
    const fromChat = await postEmbeddings({ model: 'local-chat-as-embed', input: 'x' });
    expect(fromChat.status).toBe(400);
    const chatError = (await jsonOf(fromChat)).error;
    expect(chatError.code).toBe('unsupported_endpoint');
    expect(chatError.message).toContain('is not an embedding model');
    const chat = await fetch(`${setup.gateway.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${setup.gateway.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'local-embed', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(chat.status).toBe(400);
    expect((await jsonOf(chat)).error.message).toContain('is an embedding model');
  });
});
