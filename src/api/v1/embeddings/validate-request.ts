import type { EmbeddingRequest } from '../../../openai/embedding-types.js';
import { checkTextsOrTokens, type TextsOrTokens } from '../../../openai/texts-or-tokens.js';
import {
  fail,
  optionalEnum,
  optionalInteger,
  optionalString,
  requireModelBody,
} from '../../../openai/validation-helpers.js';

/**
 * Validation of a POST /v1/embeddings request, worded and coded as OpenAI's own checks, each error naming its field
 * in `param` (e.g. `input[3]`). Where OpenAI answers only "'$.input' is invalid", the gateway says what is wrong:
 * an empty text (OpenAI refuses those in arrays), an empty token array, a mix of texts and tokens. Members the
 * gateway does not know are kept and passed on to OpenAI-compatible upstreams.
 */

/** OpenAI's limit on inputs per request. */
export const maxEmbeddingInputs = 2048;

function refuseEmptyText(text: string, param: string): void {
  if (text.length === 0) {
    fail(`Invalid '${param}': empty string. Expected a non-empty string to embed.`, param, 'invalid_value');
  }
}

const input: TextsOrTokens = { field: 'input', noun: 'input', max: maxEmbeddingInputs, checkText: refuseEmptyText };

/** Validates a parsed request body; returns it typed. Throws a 400 ApiError naming the parameter. */
export function validateEmbeddingRequest(body: unknown): EmbeddingRequest {
  requireModelBody(body);
  checkTextsOrTokens(body.input, input);
  optionalEnum(body, 'encoding_format', ['float', 'base64'], 'encoding_format');
  optionalInteger(body, 'dimensions', 1);
  optionalString(body, 'user', 'user');
  return body as EmbeddingRequest;
}
