import { type ApiError, apiError } from '../errors/api-error.js';

/** Reading OpenAI message content, for adapters that translate it into another provider's shape. */

export interface ContentPart {
  type?: unknown;
  text?: unknown;
  image_url?: { url?: unknown; detail?: unknown };
  file?: { file_data?: unknown; file_id?: unknown; filename?: unknown };
  input_audio?: { data?: unknown; format?: unknown };
  [field: string]: unknown;
}

/** The text of a string or of an array of text (and refusal) parts, joined without separators as OpenAI does. */
export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  let text = '';
  for (const part of content as ContentPart[]) {
    if (typeof part?.text === 'string') text += part.text;
    else if (typeof part?.refusal === 'string') text += part.refusal;
  }
  return text;
}

/** Content as a list of parts: a string becomes one text part. */
export function partsOf(content: unknown): ContentPart[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (Array.isArray(content)) return content as ContentPart[];
  return [];
}

/**
 * Each part of a content converted by an adapter (a string is one text part), those it has nothing to send for left
 * out. A part's `param` is the content's own when the content is a string, else its index in the list.
 */
export function convertParts<Converted>(
  content: unknown,
  param: string,
  convert: (part: ContentPart, param: string) => Converted | undefined,
): Converted[] {
  const converted: Converted[] = [];
  partsOf(content).forEach((part, index) => {
    const result = convert(part, typeof content === 'string' ? param : `${param}[${index}]`);
    if (result) converted.push(result);
  });
  return converted;
}

export interface DataUrl {
  mediaType: string;
  data: string;
}

/**
 * Media types clients write that are not the registered ones: `image/jpg` is common (OpenAI takes it, since it reads
 * the bytes), while Anthropic and Gemini accept only `image/jpeg`.
 */
const registeredMediaTypes: Readonly<Record<string, string>> = {
  'image/jpg': 'image/jpeg',
  'image/pjpeg': 'image/jpeg',
};

/** `data:<media type>;base64,<data>`; undefined for anything else (http URLs, malformed data URLs). */
export function parseDataUrl(url: string): DataUrl | undefined {
  const match = /^data:([^;,]+)((?:;[^;,]+)*);base64,/i.exec(url);
  if (!match) return undefined;
  const mediaType = (match[1] as string).trim().toLowerCase();
  return { mediaType: registeredMediaTypes[mediaType] ?? mediaType, data: url.slice(match[0].length) };
}

/** Content the target provider has no way to represent: a 400 naming the part, never silently dropped. */
export function untranslatable(param: string, providerType: string, what: string): ApiError {
  return apiError(
    'unsupported_value',
    `Invalid '${param}': ${what} cannot be sent to this model (served by a ${providerType} provider).`,
    { param },
  );
}

/** Tool-call arguments as an object: they are a JSON-encoded string on the OpenAI wire. */
export function parseToolArguments(argumentsText: string, param: string): Record<string, unknown> {
  if (argumentsText.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(argumentsText);
  } catch {
    value = undefined;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw apiError('invalid_value', `Invalid '${param}': expected a JSON object encoded as a string.`, { param });
  }
  return value as Record<string, unknown>;
}
