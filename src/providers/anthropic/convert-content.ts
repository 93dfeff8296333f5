import { type ContentPart, parseDataUrl, untranslatable } from '../message-content.js';
import type { CacheControl, DocumentBlock, ImageBlock, RequestBlock, TextBlock } from './wire-types.js';

/** One OpenAI content part as an Anthropic content block; undefined for parts that carry nothing (empty text). */

const imageMediaTypes = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);

/** Prompt-cache markers (`cache_control`) written by clients that know Anthropic are kept, never stripped. */
export function cacheControlOf(value: unknown): CacheControl | undefined {
  if (value && typeof value === 'object' && (value as { type?: unknown }).type === 'ephemeral') {
    return value as CacheControl;
  }
  return undefined;
}

function withCache<Block extends RequestBlock>(block: Block, part: ContentPart): Block {
  const cache = cacheControlOf(part.cache_control);
  return cache ? { ...block, cache_control: cache } : block;
}

function imageBlock(url: unknown, param: string): ImageBlock {
  if (typeof url !== 'string') throw untranslatable(param, 'anthropic', 'an image without a URL');
  if (/^https?:\/\//i.test(url)) return { type: 'image', source: { type: 'url', url } };
  const data = parseDataUrl(url);
  if (!data) throw untranslatable(param, 'anthropic', 'an image URL that is neither http(s) nor a base64 data URL');
  if (!imageMediaTypes.has(data.mediaType)) {
    throw untranslatable(param, 'anthropic', `an image of type ${data.mediaType} (use JPEG, PNG, GIF or WebP)`);
  }
  return { type: 'image', source: { type: 'base64', media_type: data.mediaType, data: data.data } };
}

function documentBlock(file: ContentPart['file'], param: string): DocumentBlock {
  if (typeof file?.file_data !== 'string') {
    throw untranslatable(param, 'anthropic', 'a file given by file_id (only inline file_data can be translated)');
  }
  const data = parseDataUrl(file.file_data);
  if (data?.mediaType !== 'application/pdf') {
    throw untranslatable(param, 'anthropic', 'a file that is not a base64 PDF data URL');
  }
  const block: DocumentBlock = {
    type: 'document',
    source: { type: 'base64', media_type: data.mediaType, data: data.data },
  };
  if (typeof file.filename === 'string' && file.filename) block.title = file.filename;
  return block;
}

export function convertPart(part: ContentPart, param: string): RequestBlock | undefined {
  switch (part.type) {
    case 'text':
    case 'refusal': {
      const text = typeof part.text === 'string' ? part.text : typeof part.refusal === 'string' ? part.refusal : '';
      // Anthropic refuses empty text blocks; an empty part says nothing anyway.
      if (text === '') return undefined;
      return withCache<TextBlock>({ type: 'text', text }, part);
    }
    case 'image_url':
      return withCache(imageBlock(part.image_url?.url, `${param}.image_url.url`), part);
    case 'file':
      return withCache(documentBlock(part.file, `${param}.file`), part);
    default:
      throw untranslatable(`${param}.type`, 'anthropic', `content of type '${String(part.type)}'`);
  }
}
