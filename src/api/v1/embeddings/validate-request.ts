import type { EmbeddingRequest } from '../../../openai/embedding-types.js';
import {
  describeType,
  emptyArray,
  fail,
  missing,
  optionalEnum,
  optionalInteger,
  optionalString,
  requireModelBody,
  wrongType,
} from '../../../openai/validation-helpers.js';

/**
 * Validation of a POST /v1/embeddings request, worded and coded as OpenAI's own checks, each error naming its field
 * in `param` (e.g. `input[3]`). Where OpenAI answers only "'$.input' is invalid", the gateway says what is wrong:
 * an empty text (OpenAI refuses those in arrays), an empty token array, a mix of texts and tokens. Members the
 * gateway does not know are kept and passed on to OpenAI-compatible upstreams.
 */

/** OpenAI's limit on inputs per request. */
export const maxEmbeddingInputs = 2048;

const inputTypes = 'one of a string, an array of strings, an array of integers, or an array of arrays of integers';

function checkTokens(tokens: unknown[], param: string): void {
  if (tokens.length === 0) emptyArray(param);
  for (let index = 0; index < tokens.length; index++) {
    const token = tokens[index];
    if (typeof token !== 'number' || !Number.isInteger(token) || token < 0) {
      fail(
        `Invalid '${param}[${index}]': expected a token id (an integer >= 0), but got ${describeType(token)} instead.`,
        `${param}[${index}]`,
        'invalid_value',
      );
    }
  }
}

function emptyText(param: string): never {
  fail(`Invalid '${param}': empty string. Expected a non-empty string to embed.`, param, 'invalid_value');
}

function checkInput(input: unknown): void {
  if (input === undefined || input === null) missing('input');
  if (typeof input === 'string') {
    if (input.length === 0) emptyText('input');
    return;
  }
  if (!Array.isArray(input)) wrongType('input', inputTypes, input);
  if (input.length === 0) emptyArray('input');
  // A flat list of integers is one token array: one embedding, however long.
  if (typeof input[0] === 'number') {
    checkTokens(input, 'input');
    return;
  }
  if (input.length > maxEmbeddingInputs) {
    fail(
      `Invalid 'input': array too long. Expected an array with maximum length ${maxEmbeddingInputs}, but got an array with length ${input.length} instead.`,
      'input',
      'array_above_max_length',
    );
  }
  const texts = typeof input[0] === 'string';
  for (let index = 0; index < input.length; index++) {
    const item = input[index];
    const param = `input[${index}]`;
    if (texts) {
      if (typeof item !== 'string') wrongType(param, 'a string (every input must be of the same kind)', item);
      if (item.length === 0) emptyText(param);
    } else {
      if (!Array.isArray(item)) {
        wrongType(
          param,
          index === 0 ? inputTypes : 'an array of integers (every input must be of the same kind)',
          item,
        );
      }
      checkTokens(item, param);
    }
  }
}

/** Validates a parsed request body; returns it typed. Throws a 400 ApiError naming the parameter. */
export function validateEmbeddingRequest(body: unknown): EmbeddingRequest {
  requireModelBody(body);
  checkInput(body.input);
  optionalEnum(body, 'encoding_format', ['float', 'base64'], 'encoding_format');
  optionalInteger(body, 'dimensions', 1);
  optionalString(body, 'user', 'user');
  return body as EmbeddingRequest;
}
