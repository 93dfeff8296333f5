import type { TextCompletionRequest } from '../../../openai/text-completion-types.js';
import {
  checkLogitBias,
  checkStop,
  checkStreamOptions,
  describeType,
  emptyArray,
  fail,
  missing,
  optionalBoolean,
  optionalInteger,
  optionalNumber,
  optionalString,
  requireModelBody,
  wrongType,
} from '../../../openai/validation-helpers.js';

/**
 * Validation of a legacy POST /v1/completions request, worded and coded as OpenAI's checks, each error naming its
 * field in `param`. `max_tokens` may be 0 (with `echo`, the prompt's logprobs alone: what evaluation harnesses ask
 * for). Members the gateway does not know are kept and passed on to OpenAI-compatible upstreams.
 */

/** Prompts one request may carry (as embeddings' inputs). */
export const maxPrompts = 2048;

const promptTypes = 'one of a string, an array of strings, an array of integers, or an array of arrays of integers';

function checkTokens(tokens: unknown[], param: string): void {
  if (tokens.length === 0) emptyArray(param);
  tokens.forEach((token, index) => {
    if (typeof token !== 'number' || !Number.isInteger(token) || token < 0) {
      fail(
        `Invalid '${param}[${index}]': expected a token id (an integer >= 0), but got ${describeType(token)} instead.`,
        `${param}[${index}]`,
        'invalid_value',
      );
    }
  });
}

function checkPrompt(prompt: unknown): void {
  if (prompt === undefined || prompt === null) missing('prompt');
  if (typeof prompt === 'string') return;
  if (!Array.isArray(prompt)) wrongType('prompt', promptTypes, prompt);
  if (prompt.length === 0) emptyArray('prompt');
  if (typeof prompt[0] === 'number') {
    checkTokens(prompt, 'prompt');
    return;
  }
  if (prompt.length > maxPrompts) {
    fail(
      `Invalid 'prompt': array too long. Expected an array with maximum length ${maxPrompts}, but got an array with length ${prompt.length} instead.`,
      'prompt',
      'array_above_max_length',
    );
  }
  const texts = typeof prompt[0] === 'string';
  prompt.forEach((item, index) => {
    const param = `prompt[${index}]`;
    if (texts) {
      if (typeof item !== 'string') wrongType(param, 'a string (every prompt must be of the same kind)', item);
    } else {
      if (!Array.isArray(item)) {
        wrongType(
          param,
          index === 0 ? promptTypes : 'an array of integers (every prompt must be of the same kind)',
          item,
        );
      }
      checkTokens(item, param);
    }
  });
}

/** Validates a parsed request body; returns it typed. Throws a 400 ApiError naming the parameter. */
export function validateTextCompletionRequest(body: unknown): TextCompletionRequest {
  requireModelBody(body);
  checkPrompt(body.prompt);
  optionalString(body, 'suffix', 'suffix');
  optionalInteger(body, 'max_tokens', 0);
  optionalNumber(body, 'temperature', 0, 2);
  optionalNumber(body, 'top_p', 0, 1);
  optionalInteger(body, 'n', 1, 128);
  optionalInteger(body, 'best_of', 0, 20);
  if (typeof body.best_of === 'number' && body.best_of < (typeof body.n === 'number' ? body.n : 1)) {
    fail("Invalid 'best_of': it must be greater than or equal to 'n'.", 'best_of', 'invalid_value');
  }
  optionalInteger(body, 'logprobs', 0, 5);
  optionalBoolean(body, 'echo', 'echo');
  optionalBoolean(body, 'stream', 'stream');
  checkStreamOptions(body, 'stream_options.include_usage');
  checkStop(body.stop);
  optionalNumber(body, 'presence_penalty', -2, 2);
  optionalNumber(body, 'frequency_penalty', -2, 2);
  checkLogitBias(body.logit_bias);
  optionalInteger(body, 'seed', Number.MIN_SAFE_INTEGER);
  optionalString(body, 'user', 'user');
  return body as TextCompletionRequest;
}
