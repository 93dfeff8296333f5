import { apiError } from '../errors/api-error.js';
import type { ErrorCode } from '../errors/error-codes.js';

export type JsonObject = Record<string, unknown>;

/**
 * Checks shared by the validators of every OpenAI endpoint (chat, Responses, embeddings, legacy completions), worded
 * and coded as OpenAI's own: every failure is a 400 `invalid_request_error` whose `param` names the field, e.g.
 * `input[2].call_id`.
 */

export function fail(message: string, param: string | null, code: ErrorCode): never {
  throw apiError(code, message, { param });
}

export function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'an integer' : 'a decimal';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'boolean') return 'a boolean';
  return `a ${typeof value}`;
}

export function wrongType(param: string, expected: string, value: unknown): never {
  fail(
    `Invalid type for '${param}': expected ${expected}, but got ${describeType(value)} instead.`,
    param,
    'invalid_type',
  );
}

export function missing(param: string): never {
  fail(`Missing required parameter: '${param}'.`, param, 'missing_required_parameter');
}

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Optional fields may be absent or null. */
export function present(value: unknown): boolean {
  return value !== undefined && value !== null;
}

export function requireString(object: JsonObject, field: string, param: string): string {
  const value = object[field];
  if (value === undefined || value === null) missing(param);
  if (typeof value !== 'string') wrongType(param, 'a string', value);
  return value;
}

export function optionalString(object: JsonObject, field: string, param: string): void {
  const value = object[field];
  if (present(value) && typeof value !== 'string') wrongType(param, 'a string', value);
}

export function optionalBoolean(object: JsonObject, field: string, param: string): void {
  const value = object[field];
  if (present(value) && typeof value !== 'boolean') wrongType(param, 'a boolean', value);
}

export function requireObject(value: unknown, param: string): JsonObject {
  if (value === undefined || value === null) missing(param);
  if (!isObject(value)) wrongType(param, 'an object', value);
  return value;
}

export function requireArray(value: unknown, param: string): unknown[] {
  if (value === undefined || value === null) missing(param);
  if (!Array.isArray(value)) wrongType(param, 'an array', value);
  return value;
}

/** OpenAI's wording and codes for an out-of-range number (`decimal_above_max_value`, …). */
function checkRange(param: string, value: number, min: number, max: number, kind: 'decimal' | 'integer'): void {
  if (value > max) {
    fail(
      `Invalid '${param}': ${kind} above maximum value. Expected a value <= ${max}, but got ${value} instead.`,
      param,
      `${kind}_above_max_value`,
    );
  }
  if (value < min) {
    fail(
      `Invalid '${param}': ${kind} below minimum value. Expected a value >= ${min}, but got ${value} instead.`,
      param,
      `${kind}_below_min_value`,
    );
  }
}

export function optionalNumber(object: JsonObject, field: string, min: number, max: number): void {
  const value = object[field];
  if (!present(value)) return;
  if (typeof value !== 'number' || !Number.isFinite(value)) wrongType(field, 'a decimal', value);
  checkRange(field, value, min, max, 'decimal');
}

export function optionalInteger(object: JsonObject, field: string, min: number, max = Number.MAX_SAFE_INTEGER): void {
  const value = object[field];
  if (!present(value)) return;
  if (typeof value !== 'number' || !Number.isInteger(value)) wrongType(field, 'an integer', value);
  checkRange(field, value, min, max, 'integer');
}

export function checkEnum(value: unknown, allowed: readonly string[], param: string): void {
  if (typeof value === 'string' && allowed.includes(value)) return;
  const list = allowed.map((item) => `'${item}'`);
  const spoken = list.length > 1 ? `${list.slice(0, -1).join(', ')}, and ${list.at(-1)}` : (list[0] ?? '');
  const shown = typeof value === 'string' ? `'${value.slice(0, 64)}'` : describeType(value);
  fail(`Invalid value: ${shown}. Supported values are: ${spoken}.`, param, 'invalid_value');
}

export function optionalEnum(object: JsonObject, field: string, allowed: readonly string[], param: string): void {
  const value = object[field];
  if (present(value)) checkEnum(value, allowed, param);
}

export function emptyArray(param: string): never {
  fail(
    `Invalid '${param}': empty array. Expected an array with minimum length 1, but got an empty array instead.`,
    param,
    'empty_array',
  );
}

/** The body is a JSON object naming a model. */
export function requireModelBody(body: unknown): asserts body is JsonObject & { model: string } {
  if (!isObject(body)) {
    fail(`The request body must be a JSON object, but got ${describeType(body)}.`, null, 'invalid_type');
  }
  if (body.model === undefined || body.model === null) missing('model');
  if (typeof body.model !== 'string') wrongType('model', 'a string', body.model);
  if (body.model.length === 0) fail("Invalid 'model': empty string. Expected a model name.", 'model', 'invalid_value');
}

/**
 * `stream_options`: an object, allowed only with `stream: true`. `include_usage` is checked where the endpoint has it,
 * under the `param` name OpenAI reports for that endpoint.
 */
export function checkStreamOptions(body: JsonObject, includeUsageParam?: string): void {
  const options = body.stream_options;
  if (!present(options)) return;
  if (!isObject(options)) wrongType('stream_options', 'an object', options);
  if (body.stream !== true) {
    fail("The 'stream_options' parameter is only allowed when 'stream' is enabled.", 'stream_options', 'invalid_value');
  }
  if (includeUsageParam !== undefined) optionalBoolean(options, 'include_usage', includeUsageParam);
}

/** `stop`: a string or up to four strings (chat and legacy completions). */
export function checkStop(stop: unknown): void {
  if (!present(stop) || typeof stop === 'string') return;
  if (!Array.isArray(stop)) wrongType('stop', 'one of a string or array of strings', stop);
  if (stop.length > 4) {
    fail(
      `Invalid 'stop': array too long. Expected an array with maximum length 4, but got an array with length ${stop.length} instead.`,
      'stop',
      'array_above_max_length',
    );
  }
  stop.forEach((item, index) => {
    if (typeof item !== 'string') wrongType(`stop[${index}]`, 'a string', item);
  });
}

/** `logit_bias`: token ids to numbers from -100 to 100. */
export function checkLogitBias(bias: unknown): void {
  if (!present(bias)) return;
  if (!isObject(bias)) wrongType('logit_bias', 'an object', bias);
  for (const [token, value] of Object.entries(bias)) {
    if (typeof value !== 'number' || value < -100 || value > 100) {
      fail(
        `Invalid 'logit_bias': the value for token ${token.slice(0, 16)} must be a number from -100 to 100.`,
        'logit_bias',
        'invalid_value',
      );
    }
  }
}
