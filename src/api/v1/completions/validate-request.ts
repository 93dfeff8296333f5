import type { TextCompletionRequest } from '../../../openai/text-completion-types.js';
import { checkTextsOrTokens, type TextsOrTokens } from '../../../openai/texts-or-tokens.js';
import {
  checkLogitBias,
  checkStop,
  checkStreamOptions,
  fail,
  optionalBoolean,
  optionalInteger,
  optionalNumber,
  optionalString,
  requireModelBody,
} from '../../../openai/validation-helpers.js';

/**
 * Validation of a legacy POST /v1/completions request, worded and coded as OpenAI's checks, each error naming its
 * field in `param`. `max_tokens` may be 0 (with `echo`, the prompt's logprobs alone: what evaluation harnesses ask
 * for). Members the gateway does not know are kept and passed on to OpenAI-compatible upstreams.
 */

/** Prompts one request may carry (as embeddings' inputs). */
export const maxPrompts = 2048;

const prompt: TextsOrTokens = { field: 'prompt', noun: 'prompt', max: maxPrompts };

/** Validates a parsed request body; returns it typed. Throws a 400 ApiError naming the parameter. */
export function validateTextCompletionRequest(body: unknown): TextCompletionRequest {
  requireModelBody(body);
  checkTextsOrTokens(body.prompt, prompt);
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
