import type { EmbeddingList } from '../../openai/embedding-types.js';
import { eachText } from '../../openai/texts-or-tokens.js';
import { malformed, parseJsonObject } from '../http.js';
import type { HttpTransport } from '../http-provider.js';
import type { EmbeddingCall, EmbeddingResult } from '../provider.js';
import { errorInsideSuccess } from './parse-error.js';

/**
 * Embeddings from an OpenAI-compatible server's `/embeddings`: the client's request forwarded with only the model
 * name changed (encoding_format, dimensions, user and members the gateway does not know go as they came), the
 * answer checked (one vector per input, in input order) and kept as bytes for the client when nothing must change.
 */
export function embedWithOpenAi(
  providerName: string,
  headers: Readonly<Record<string, string>>,
  call: EmbeddingCall,
  transport: HttpTransport,
): Promise<EmbeddingResult> {
  const expected = eachText(call.request.input).length;
  return transport.postForBody(
    { path: `${transport.basePath}/embeddings`, headers, body: embeddingBody(call) },
    call,
    (bytes) => readEmbeddingList(providerName, bytes, expected),
  );
}

/** The client's bytes when they already name the upstream model; otherwise the request with its model replaced. */
export function embeddingBody(call: EmbeddingCall): string | Buffer {
  const upstreamModel = call.model.upstreamModel;
  if (call.body && call.request.model === upstreamModel) return call.body;
  return JSON.stringify({ ...call.request, model: upstreamModel });
}

/** Reads an embeddings answer: a list with one vector per input, ordered by `index` (reordered if it was not). */
export function readEmbeddingList(providerName: string, bytes: Buffer, expected: number): EmbeddingResult {
  const object = parseJsonObject(providerName, bytes.toString('utf8'));
  const data = object.data;
  if (!Array.isArray(data)) {
    if (object.error !== undefined) throw errorInsideSuccess(providerName, object);
    throw malformed(providerName, 'an embeddings response without data');
  }
  if (data.length !== expected) {
    throw malformed(providerName, `${data.length} embeddings for ${expected} inputs`);
  }
  // A list or vectors the upstream named otherwise (or not at all) reach the client as what they are, serialized again.
  let untouched = object.object === 'list';
  object.object = 'list';
  for (let position = 0; position < data.length; position++) {
    const item = data[position] as { index?: unknown; embedding?: unknown } | null;
    if (!item || typeof item !== 'object' || (typeof item.embedding !== 'string' && !Array.isArray(item.embedding))) {
      throw malformed(providerName, 'an embedding without a vector');
    }
    if (item.index !== position || (item as { object?: unknown }).object !== 'embedding') untouched = false;
    (item as { object?: unknown }).object = 'embedding';
  }
  const list = object as unknown as EmbeddingList;
  if (untouched) return { list, raw: bytes };
  const indexes = new Set(list.data.map((item) => item.index));
  if (
    indexes.size !== expected ||
    ![...indexes].every((index) => Number.isInteger(index) && index >= 0 && index < expected)
  ) {
    throw malformed(providerName, 'embeddings whose indexes do not match the inputs');
  }
  list.data.sort((first, second) => first.index - second.index);
  return { list };
}
