import type { EmbeddingEncoding, EmbeddingList } from './embedding-types.js';

/**
 * Embedding vectors in the two encodings of the wire format: JSON floats, or base64 of little-endian float32 bytes
 * (what the OpenAI SDKs ask for by default and decode). An upstream may answer in the other encoding than the one
 * asked for (some ignore `encoding_format`), so the gateway converts: the client always gets what it asked for.
 */

/** Floats as base64 of their little-endian float32 bytes. */
export function encodeBase64Vector(values: readonly number[]): string {
  const bytes = Buffer.allocUnsafe(values.length * 4);
  for (let index = 0; index < values.length; index++) bytes.writeFloatLE(values[index] as number, index * 4);
  return bytes.toString('base64');
}

/** The floats of a base64 vector; undefined when it is not whole float32 values. */
export function decodeBase64Vector(text: string): number[] | undefined {
  const bytes = Buffer.from(text, 'base64');
  if (bytes.length % 4 !== 0) return undefined;
  const values = new Array<number>(bytes.length / 4);
  for (let index = 0; index < values.length; index++) values[index] = bytes.readFloatLE(index * 4);
  return values;
}

/** Whether every vector of the list is already in the encoding asked for. */
export function inEncoding(list: EmbeddingList, encoding: EmbeddingEncoding): boolean {
  const wanted = encoding === 'base64' ? 'string' : 'object';
  return list.data.every((item) => typeof item.embedding === wanted);
}

/**
 * Rewrites the list's vectors into the encoding asked for, in place; returns false when a vector is neither a list
 * of numbers nor valid base64 float32 (the upstream's answer is then malformed).
 */
export function toEncoding(list: EmbeddingList, encoding: EmbeddingEncoding): boolean {
  for (const item of list.data) {
    const vector = item.embedding;
    if (typeof vector === 'string') {
      if (encoding === 'base64') continue;
      const values = decodeBase64Vector(vector);
      if (!values) return false;
      item.embedding = values;
    } else {
      if (!Array.isArray(vector) || !vector.every((value) => typeof value === 'number')) return false;
      if (encoding === 'base64') item.embedding = encodeBase64Vector(vector);
    }
  }
  return true;
}
