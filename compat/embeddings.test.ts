import { createOpenAI } from '@ai-sdk/openai';
import { OpenAIEmbeddings } from '@langchain/openai';
import { embed, embedMany } from 'ai';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { useGatewayWithMock } from '../test/support/gateway-fixture.js';
import { mockEmbedding } from '../test/support/mock-openai-embeddings.js';

/**
 * The real client libraries calling /v1/embeddings: the openai npm SDK (base64 by default, decoded by the SDK), the AI
 * SDK's embed/embedMany (floats) and LangChain's OpenAIEmbeddings. Every vector must equal the upstream's exactly.
 */

const embeddingModel = (name: string, upstream: string) => ({
  name,
  provider: 'mock',
  upstream_model: upstream,
  capabilities: ['embeddings'],
});

const setup = useGatewayWithMock({
  models: [
    embeddingModel('text-embedding-3-small', 'embed'),
    embeddingModel('embed-float-only', 'embed-float-only'),
    embeddingModel('embed-base64-only', 'embed-base64-only'),
  ],
});

describe('openai npm SDK embeddings.create', () => {
  const client = () => new OpenAI({ baseURL: setup.gateway.baseUrl, apiKey: setup.gateway.key, maxRetries: 0 });

  it('asks for base64 by default and gets the upstream’s vectors exactly', async () => {
    const result = await client().embeddings.create({
      model: 'text-embedding-3-small',
      input: ['first', 'second'],
    });
    expect(setup.mock.requests.at(-1)?.body.encoding_format).toBe('base64');
    expect(result.data.map((item) => item.embedding)).toEqual([mockEmbedding('first'), mockEmbedding('second')]);
    expect(result.usage).toEqual({ prompt_tokens: 2, total_tokens: 2 });
  });

  it('gets the same vectors from an upstream that ignores the encoding asked for', async () => {
    for (const model of ['embed-float-only', 'embed-base64-only']) {
      const base64 = await client().embeddings.create({ model, input: 'some text' });
      expect(base64.data[0]?.embedding).toEqual(mockEmbedding('some text'));
      const floats = await client().embeddings.create({ model, input: 'some text', encoding_format: 'float' });
      expect(floats.data[0]?.embedding).toEqual(mockEmbedding('some text'));
    }
  });

  it('passes dimensions and token input', async () => {
    const result = await client().embeddings.create({
      model: 'text-embedding-3-small',
      input: [5, 6, 7],
      dimensions: 3,
    });
    expect(result.data[0]?.embedding).toEqual(mockEmbedding([5, 6, 7], 3));
  });

  it('raises BadRequestError naming the parameter', async () => {
    const error = await client()
      .embeddings.create({ model: 'gpt-4o-mini', input: 'x' })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('model');
  });
});

describe('AI SDK embed and embedMany', () => {
  const provider = () => createOpenAI({ baseURL: setup.gateway.baseUrl, apiKey: setup.gateway.key });

  it('embeds one value', async () => {
    const result = await embed({
      model: provider().embedding('text-embedding-3-small'),
      value: 'sunny day',
      maxRetries: 0,
    });
    expect(result.embedding).toEqual(mockEmbedding('sunny day'));
    expect(result.usage.tokens).toBe(2);
  });

  it('embeds many values in order', async () => {
    const values = Array.from({ length: 5 }, (_, index) => `value ${index}`);
    const result = await embedMany({
      model: provider().embedding('text-embedding-3-small'),
      values,
      maxRetries: 0,
    });
    expect(result.embeddings).toEqual(values.map((value) => mockEmbedding(value)));
  });
});

describe('LangChain OpenAIEmbeddings', () => {
  const embeddings = (model = 'text-embedding-3-small') =>
    new OpenAIEmbeddings({
      model,
      apiKey: setup.gateway.key,
      configuration: { baseURL: setup.gateway.baseUrl },
      maxRetries: 0,
    });

  it('embeds a query and documents', async () => {
    expect(await embeddings().embedQuery('what is the weather')).toEqual(mockEmbedding('what is the weather'));
    const documents = ['doc one', 'doc two', 'doc three'];
    expect(await embeddings('embed-float-only').embedDocuments(documents)).toEqual(
      documents.map((document) => mockEmbedding(document)),
    );
  });
});
