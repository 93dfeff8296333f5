import { describeType, emptyArray, fail, missing, wrongType } from './validation-helpers.js';

/**
 * The text members of legacy completions (`prompt`) and embeddings (`input`): a string, an array of strings, an array
 * of token ids (one text, however long) or an array of token arrays, every item of one kind, worded as OpenAI's checks.
 */
export interface TextsOrTokens {
  /** The member's name, as `param` reports it. */
  field: string;
  /** What one item is called in the messages ("prompt", "input"). */
  noun: string;
  /** Items one request may carry. */
  max: number;
  /** An endpoint's own check of each text (embeddings refuse empty ones). */
  checkText?: (text: string, param: string) => void;
}

const kinds = 'one of a string, an array of strings, an array of integers, or an array of arrays of integers';

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

export function checkTextsOrTokens(value: unknown, member: TextsOrTokens): void {
  const { field, noun, max, checkText } = member;
  if (value === undefined || value === null) missing(field);
  if (typeof value === 'string') {
    checkText?.(value, field);
    return;
  }
  if (!Array.isArray(value)) wrongType(field, kinds, value);
  if (value.length === 0) emptyArray(field);
  if (typeof value[0] === 'number') {
    checkTokens(value, field);
    return;
  }
  if (value.length > max) {
    fail(
      `Invalid '${field}': array too long. Expected an array with maximum length ${max}, but got an array with length ${value.length} instead.`,
      field,
      'array_above_max_length',
    );
  }
  const texts = typeof value[0] === 'string';
  for (let index = 0; index < value.length; index++) {
    const item = value[index];
    const param = `${field}[${index}]`;
    if (texts) {
      if (typeof item !== 'string') wrongType(param, `a string (every ${noun} must be of the same kind)`, item);
      checkText?.(item, param);
    } else {
      if (!Array.isArray(item)) {
        wrongType(param, index === 0 ? kinds : `an array of integers (every ${noun} must be of the same kind)`, item);
      }
      checkTokens(item, param);
    }
  }
}

/** The texts a checked member stands for, one per completion or embedding asked for: strings, or token arrays. */
export function eachText(value: string | string[] | number[] | number[][]): string[] | number[][] {
  if (typeof value === 'string') return [value];
  if (value.length > 0 && typeof value[0] === 'number') return [value as number[]];
  return value as string[] | number[][];
}
