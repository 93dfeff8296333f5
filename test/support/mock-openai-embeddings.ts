import type { ServerResponse } from 'node:http';
import type { RecordedRequest } from './mock-server.js';

/**
 * The OpenAI-compatible mock's `/embeddings`, as OpenAI answers it: one vector per input in input order, floats or
 * (encoding_format: base64) base64 of little-endian float32 bytes, `usage` with prompt and total tokens. Vectors are
 * a pure function of the input (mockEmbedding), so tests know what the upstream sent. Upstream models that misbehave:
 * `embed-float-only` and `embed-base64-only` ignore encoding_format, `embed-doubles` answers floats that are not
 * float32 values, `embed-no-usage` reports no usage, `embed-shuffled` lists the vectors in reverse order,
 * `embed-short` answers one vector too few.
 */

/** The mock's default vector size when the request sets no `dimensions`. */
export const mockEmbeddingDimensions = 8;

function seedOf(input: unknown): number {
  let hash = 0x811c9dc5;
  for (const character of JSON.stringify(input)) {
    hash ^= character.codePointAt(0) ?? 0;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

/** The vector the mock gives an input: float32 values (exact in either encoding). */
export function mockEmbedding(input: string | number[], dimensions = mockEmbeddingDimensions): number[] {
  const seed = seedOf(input);
  return Array.from({ length: dimensions }, (_, index) => Math.fround(Math.sin(seed + index * 7.3) / 3));
}

/** Values with more precision than float32 holds, as some servers send (the float answer must pass them on exactly). */
export function mockDoubleEmbedding(input: string | number[], dimensions = mockEmbeddingDimensions): number[] {
  return mockEmbedding(input, dimensions).map((value, index) => value + (index + 1) * 1e-12);
}

export function base64Of(vector: readonly number[]): string {
  const bytes = Buffer.alloc(vector.length * 4);
  vector.forEach((value, index) => {
    bytes.writeFloatLE(value, index * 4);
  });
  return bytes.toString('base64');
}

function inputsOf(input: unknown): Array<string | number[]> {
  if (typeof input === 'string') return [input];
  if (!Array.isArray(input) || input.length === 0) return [];
  if (typeof input[0] === 'number') return [input as number[]];
  return input as Array<string | number[]>;
}

/** Tokens the mock counts for an input: words for a text, ids for a token array. */
export function mockInputTokens(input: string | number[]): number {
  return typeof input === 'string' ? Math.max(1, input.split(/\s+/).filter(Boolean).length) : input.length;
}

export function answerEmbeddings(request: RecordedRequest, response: ServerResponse): void {
  const body = request.body;
  const model = String(body.model);
  const inputs = inputsOf(body.input);
  if (inputs.length === 0) {
    const text = JSON.stringify({
      error: {
        message:
          "'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference.",
        type: 'invalid_request_error',
        param: null,
        code: null,
      },
    });
    response.writeHead(400, { 'content-type': 'application/json' });
    response.end(text);
    return;
  }
  const dimensions = typeof body.dimensions === 'number' ? body.dimensions : mockEmbeddingDimensions;
  const base64 =
    model === 'embed-base64-only' ||
    (model !== 'embed-float-only' && model !== 'embed-doubles' && body.encoding_format === 'base64');
  const data = inputs.map((input, index) => {
    const vector =
      model === 'embed-doubles' ? mockDoubleEmbedding(input, dimensions) : mockEmbedding(input, dimensions);
    return { object: 'embedding', index, embedding: base64 ? base64Of(vector) : vector };
  });
  if (model === 'embed-shuffled') data.reverse();
  if (model === 'embed-short') data.pop();
  const tokens = inputs.reduce((total, input) => total + mockInputTokens(input), 0);
  const answer: Record<string, unknown> = { object: 'list', data, model };
  if (model !== 'embed-no-usage') answer.usage = { prompt_tokens: tokens, total_tokens: tokens };
  const text = JSON.stringify(answer);
  response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  response.end(text);
}
