import { apiError } from '../../../errors/api-error.js';
import { type EmbeddingList, type EmbeddingRequest, isTokenInput } from '../../../openai/embedding-types.js';
import { inEncoding, toEncoding } from '../../../openai/embedding-vectors.js';
import { eachText } from '../../../openai/texts-or-tokens.js';
import { estimateUsage, readUsage, type TokenUsage } from '../../../usage/usage.js';
import type { Exchange, Outcome } from '../pipeline/endpoint.js';
import { runOperation } from '../pipeline/exchange-dispatch.js';
import { sendJson } from '../pipeline/json-answer.js';
import { embeddingOperation } from './operation.js';

/**
 * POST /v1/embeddings answered: dispatched to an embedding model's deployments, the vectors converted to the encoding
 * the client asked for when the upstream used the other one, usage read (or estimated, marked as such, when the
 * upstream reports none), and the upstream's own bytes sent when nothing in them had to change.
 */
export async function answerEmbeddings(
  request: EmbeddingRequest,
  body: Buffer | undefined,
  exchange: Exchange,
): Promise<Outcome> {
  const result = await runOperation(exchange, embeddingOperation(request, body));
  const list = result.list;
  const encoding = request.encoding_format === 'base64' ? 'base64' : 'float';
  let payload: Buffer | string | undefined = result.raw;
  if (!inEncoding(list, encoding)) {
    if (!toEncoding(list, encoding)) {
      const provider = exchange.trace.served?.provider ?? 'upstream';
      throw apiError('upstream_malformed_response', `The upstream provider "${provider}" sent a malformed embedding.`);
    }
    payload = undefined;
  }
  const reported = readUsage(list.usage);
  const usage = reported ?? estimateEmbeddingUsage(request);
  if (!reported) {
    list.usage = { prompt_tokens: usage.promptTokens, total_tokens: usage.totalTokens };
    payload = undefined;
  }
  payload ??= JSON.stringify(list satisfies EmbeddingList);
  return { usage, responseBody: sendJson(exchange, payload) };
}

/** Tokens of the input: counted for token arrays, estimated for texts; marked as an estimate. */
export function estimateEmbeddingUsage(request: EmbeddingRequest): TokenUsage {
  const inputs = eachText(request.input);
  if (isTokenInput(inputs)) {
    const tokens = inputs.reduce((total, tokensOfInput) => total + tokensOfInput.length, 0);
    return { ...estimateUsage(0, 0), promptTokens: tokens, totalTokens: tokens };
  }
  const characters = inputs.reduce((total, text) => total + text.length, 0);
  return estimateUsage(characters, 0);
}
