import { apiError } from '../../errors/api-error.js';
import {
  type Embedding,
  type EmbeddingList,
  type EmbeddingRequest,
  isTokenInput,
} from '../../openai/embedding-types.js';
import { eachText } from '../../openai/texts-or-tokens.js';
import { malformed, parseJsonObject } from '../http.js';
import { modelPath } from './model-path.js';

/**
 * An OpenAI embeddings request as Gemini's `models/{model}:batchEmbedContents`, and the answers back. Gemini takes at
 * most `maxBatchSize` texts per call, so larger requests are split and the vectors reassembled in input order. Gemini
 * embeds text only: token arrays are refused. `dimensions` becomes `outputDimensionality`; `user` has no equivalent.
 */

/** Requests per batchEmbedContents call that Gemini accepts. */
export const maxBatchSize = 100;

export interface GeminiEmbedRequest {
  model: string;
  content: { parts: Array<{ text: string }> };
  outputDimensionality?: number;
}

export interface GeminiBatchEmbedRequest {
  requests: GeminiEmbedRequest[];
}

/** Why Gemini cannot embed this request (token input); undefined when it can. */
export function geminiEmbeddingRefusal(request: EmbeddingRequest) {
  if (!isTokenInput(eachText(request.input))) return undefined;
  return apiError(
    'unsupported_value',
    `The model \`${request.model}\` is served by Gemini, which embeds text only: send 'input' as a string or an array of strings, not token ids.`,
    { param: 'input' },
  );
}

/** The batch calls for a request, in input order, each of at most maxBatchSize texts. */
export function toBatchEmbedRequests(request: EmbeddingRequest, upstreamModel: string): GeminiBatchEmbedRequest[] {
  const texts = eachText(request.input) as string[];
  const model = modelPath(upstreamModel);
  const dimensions = typeof request.dimensions === 'number' ? request.dimensions : undefined;
  const batches: GeminiBatchEmbedRequest[] = [];
  for (let start = 0; start < texts.length; start += maxBatchSize) {
    batches.push({
      requests: texts.slice(start, start + maxBatchSize).map((text) => ({
        model,
        content: { parts: [{ text }] },
        ...(dimensions === undefined ? {} : { outputDimensionality: dimensions }),
      })),
    });
  }
  return batches;
}

export interface BatchEmbedAnswer {
  vectors: number[][];
  /** Input tokens, when the API reported them (newer models do, in usageMetadata). */
  promptTokens: number | undefined;
}

/** One batchEmbedContents answer: a vector per request of the batch, in order. */
export function readBatchEmbedAnswer(providerName: string, bytes: Buffer, expected: number): BatchEmbedAnswer {
  const body = parseJsonObject(providerName, bytes.toString('utf8'));
  const embeddings = body.embeddings;
  if (!Array.isArray(embeddings)) throw malformed(providerName, 'a batchEmbedContents response without embeddings');
  if (embeddings.length !== expected)
    throw malformed(providerName, `${embeddings.length} embeddings for ${expected} inputs`);
  const vectors = embeddings.map((embedding: { values?: unknown } | null) => {
    const values = embedding?.values;
    if (!Array.isArray(values) || !values.every((value) => typeof value === 'number')) {
      throw malformed(providerName, 'an embedding without values');
    }
    return values as number[];
  });
  const tokens = (body.usageMetadata as { promptTokenCount?: unknown } | undefined)?.promptTokenCount;
  return { vectors, promptTokens: typeof tokens === 'number' ? tokens : undefined };
}

/** The batches' answers as one OpenAI list, named by the public model; usage only when every batch reported it. */
export function toEmbeddingList(model: string, answers: readonly BatchEmbedAnswer[]): EmbeddingList {
  const data: Embedding[] = [];
  let promptTokens = 0;
  let reported = true;
  for (const answer of answers) {
    for (const vector of answer.vectors) data.push({ object: 'embedding', index: data.length, embedding: vector });
    if (answer.promptTokens === undefined) reported = false;
    else promptTokens += answer.promptTokens;
  }
  const list: EmbeddingList = { object: 'list', data, model };
  if (reported) list.usage = { prompt_tokens: promptTokens, total_tokens: promptTokens };
  return list;
}
