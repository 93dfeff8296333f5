import { requestError } from './request-error.js';

/**
 * The checks a Messages request is made of, with Anthropic's wording (it validates with pydantic: "Field required",
 * "Input should be a valid string", …). Optional fields may be absent or null.
 */

export type JsonObject = Record<string, unknown>;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function present(value: unknown): boolean {
  return value !== undefined && value !== null;
}

export function missing(path: string): never {
  throw requestError(path, 'Field required', 'missing_required_parameter');
}

export function wrongType(path: string, expected: string): never {
  throw requestError(path, `Input should be ${expected}`, 'invalid_type');
}

export function requireObject(value: unknown, path: string): JsonObject {
  if (value === undefined) missing(path);
  if (!isObject(value)) wrongType(path, 'a valid dictionary');
  return value;
}

export function requireArray(value: unknown, path: string): unknown[] {
  if (value === undefined) missing(path);
  if (!Array.isArray(value)) wrongType(path, 'a valid list');
  return value;
}

export function requireString(value: unknown, path: string): string {
  if (value === undefined) missing(path);
  if (typeof value !== 'string') wrongType(path, 'a valid string');
  return value;
}

export function optionalString(value: unknown, path: string): void {
  if (present(value) && typeof value !== 'string') wrongType(path, 'a valid string');
}

export function optionalBoolean(value: unknown, path: string): void {
  if (present(value) && typeof value !== 'boolean') wrongType(path, 'a valid boolean');
}

export function optionalObject(value: unknown, path: string): void {
  if (present(value) && !isObject(value)) wrongType(path, 'a valid dictionary');
}

export function optionalArray(value: unknown, path: string): void {
  if (present(value) && !Array.isArray(value)) wrongType(path, 'a valid list');
}

/**
 * An integer from `minimum` up; `required` fields must be present. Above 2^53 - 1 a JSON number is no longer exact
 * (…993 reads as …992), so the value a translation would send on is not the one the client wrote: refused, as the
 * OpenAI validators do.
 */
export function checkInteger(value: unknown, path: string, minimum: number, required = false): void {
  if (!present(value)) {
    if (required) missing(path);
    return;
  }
  if (typeof value !== 'number' || !Number.isInteger(value)) wrongType(path, 'a valid integer');
  if (value < minimum) {
    throw requestError(path, `Input should be greater than or equal to ${minimum}`, 'integer_below_min_value');
  }
  if (value > Number.MAX_SAFE_INTEGER) {
    throw requestError(
      path,
      `Input should be less than or equal to ${Number.MAX_SAFE_INTEGER}`,
      'integer_above_max_value',
    );
  }
}

export function checkNumber(value: unknown, path: string, minimum: number, maximum: number): void {
  if (!present(value)) return;
  if (typeof value !== 'number' || !Number.isFinite(value)) wrongType(path, 'a valid number');
  if (value < minimum) {
    throw requestError(path, `Input should be greater than or equal to ${minimum}`, 'decimal_below_min_value');
  }
  if (value > maximum) {
    throw requestError(path, `Input should be less than or equal to ${maximum}`, 'decimal_above_max_value');
  }
}

/** One of `allowed`, in pydantic's words: "Input should be 'auto', 'any', 'tool' or 'none'". */
export function checkLiteral(value: unknown, path: string, allowed: readonly string[]): void {
  if (value === undefined) missing(path);
  if (typeof value === 'string' && allowed.includes(value)) return;
  const quoted = allowed.map((option) => `'${option}'`);
  const listed = quoted.length > 1 ? `${quoted.slice(0, -1).join(', ')} or ${quoted.at(-1)}` : (quoted[0] ?? '');
  throw requestError(path, `Input should be ${listed}`, 'invalid_value');
}
