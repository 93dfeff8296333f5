import { describe, expect, it } from 'vitest';
import type { EmbeddingList } from '../../src/openai/embedding-types.js';
import { decodeBase64Vector, encodeBase64Vector, inEncoding, toEncoding } from '../../src/openai/embedding-vectors.js';
import {
  geminiEmbeddingRefusal,
  readBatchEmbedAnswer,
  toBatchEmbedRequests,
  toEmbeddingList,
} from '../../src/providers/gemini/convert-embeddings.js';

const list = (embeddings: Array<number[] | string>): EmbeddingList => ({
  object: 'list',
  model: 'm',
  data: embeddings.map((embedding, index) => ({ object: 'embedding', index, embedding })),
});

describe('embedding vectors in either encoding', () => {
  it('writes base64 as little-endian float32 and reads it back', () => {
    const encoded = encodeBase64Vector([1, -0.5, 0.25]);
    expect(Buffer.from(encoded, 'base64')).toEqual(Buffer.from([0, 0, 128, 63, 0, 0, 0, 191, 0, 0, 128, 62]));
    expect(decodeBase64Vector(encoded)).toEqual([1, -0.5, 0.25]);
    expect(decodeBase64Vector(Buffer.from([1, 2, 3]).toString('base64'))).toBeUndefined();
  });

  it('converts a list to the encoding asked for, and says when a vector is unusable', () => {
    const floats = list([[0.1, 0.2]]);
    expect(inEncoding(floats, 'float')).toBe(true);
    expect(toEncoding(floats, 'base64')).toBe(true);
    expect(decodeBase64Vector(floats.data[0]?.embedding as string)).toEqual([Math.fround(0.1), Math.fround(0.2)]);
    expect(toEncoding(floats, 'float')).toBe(true);
    expect(floats.data[0]?.embedding).toEqual([Math.fround(0.1), Math.fround(0.2)]);
    expect(toEncoding(list([['x' as unknown as number]]), 'base64')).toBe(false);
    expect(toEncoding(list(['AAA']), 'float')).toBe(false);
  });
});

describe('embeddings for Gemini', () => {
  it('splits texts into batchEmbedContents calls of at most 100, in order', () => {
    const input = Array.from({ length: 201 }, (_, index) => `t${index}`);
    const batches = toBatchEmbedRequests({ model: 'public', input, dimensions: 3 }, 'gemini-embedding-001');
    expect(batches.map((batch) => batch.requests.length)).toEqual([100, 100, 1]);
    expect(batches[2]?.requests[0]).toEqual({
      model: 'models/gemini-embedding-001',
      content: { parts: [{ text: 't200' }] },
      outputDimensionality: 3,
    });
    expect(toBatchEmbedRequests({ model: 'p', input: 'one' }, 'tunedModels/mine')[0]?.requests).toEqual([
      { model: 'tunedModels/mine', content: { parts: [{ text: 'one' }] } },
    ]);
  });

  it('reassembles the answers with indexes in input order, with usage only when every batch reported it', () => {
    const first = readBatchEmbedAnswer('g', Buffer.from('{"embeddings":[{"values":[1]},{"values":[2]}]}'), 2);
    const second = readBatchEmbedAnswer(
      'g',
      Buffer.from('{"embeddings":[{"values":[3]}],"usageMetadata":{"promptTokenCount":4}}'),
      1,
    );
    const combined = toEmbeddingList('public', [first, second]);
    expect(combined.data).toEqual([
      { object: 'embedding', index: 0, embedding: [1] },
      { object: 'embedding', index: 1, embedding: [2] },
      { object: 'embedding', index: 2, embedding: [3] },
    ]);
    expect(combined.usage).toBeUndefined();
    expect(toEmbeddingList('public', [second]).usage).toEqual({ prompt_tokens: 4, total_tokens: 4 });
    expect(() => readBatchEmbedAnswer('g', Buffer.from('{"embeddings":[]}'), 1)).toThrow('0 embeddings for 1 inputs');
  });

  it('refuses token input, and only token input', () => {
    expect(geminiEmbeddingRefusal({ model: 'm', input: [1, 2] })?.param).toBe('input');
    expect(geminiEmbeddingRefusal({ model: 'm', input: [[1], [2]] })?.code).toBe('unsupported_value');
    expect(geminiEmbeddingRefusal({ model: 'm', input: ['a'] })).toBeUndefined();
  });
});
