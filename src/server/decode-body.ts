import { promisify } from 'node:util';
import * as zlib from 'node:zlib';
import { type ApiError, apiError, payloadTooLarge } from '../errors/api-error.js';

/**
 * Request bodies sent compressed (`Content-Encoding`), decoded before they are parsed, never past the size limit: a
 * small upload that would inflate to gigabytes stops at `limits.max_body_size` (zlib's `maxOutputLength`). gzip,
 * deflate and br are read on every Node; zstd where node:zlib has it (Node 22.15 and later). A coding the gateway
 * cannot read is a 415 naming it, decided before the body is read.
 */

type Decoder = (bytes: Buffer, options: zlib.ZlibOptions & zlib.BrotliOptions) => Promise<Buffer>;

const gunzip: Decoder = promisify(zlib.gunzip);
const inflate: Decoder = promisify(zlib.inflate);
const inflateRaw: Decoder = promisify(zlib.inflateRaw);
const brotliDecompress: Decoder = promisify(zlib.brotliDecompress);
const zstdDecompress = (zlib as { zstdDecompress?: Parameters<typeof promisify>[0] }).zstdDecompress;

const decoders: Readonly<Record<string, Decoder>> = {
  gzip: gunzip,
  'x-gzip': gunzip,
  // HTTP's deflate is zlib-wrapped; some clients send the raw stream, which is read as well.
  deflate: (bytes, options) => inflate(bytes, options).catch(() => inflateRaw(bytes, options)),
  br: brotliDecompress,
  ...(zstdDecompress ? { zstd: promisify(zstdDecompress) as Decoder } : {}),
};

/**
 * The codings of a Content-Encoding header, in the order they were applied (identity left out); throws 415 for one the
 * gateway cannot read. Undefined when the body is not encoded.
 */
export function contentCodings(header: string | undefined): string[] | undefined {
  if (header === undefined) return undefined;
  const codings = header
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '' && coding !== 'identity');
  if (codings.length === 0) return undefined;
  for (const coding of codings) {
    if (!(coding in decoders)) throw unsupportedCoding(coding);
  }
  return codings;
}

function unsupportedCoding(coding: string): ApiError {
  const readable = Object.keys(decoders).filter((name) => name !== 'x-gzip');
  return apiError(
    'unsupported_media_type',
    `The request body is encoded as '${coding.slice(0, 32)}', which this server cannot read (Content-Encoding). Send it uncompressed or as ${readable.join(', ')}.`,
  );
}

/** The body with its codings undone (the last applied first), at most `limitBytes` long. */
export async function decodeBody(bytes: Buffer, codings: readonly string[], limitBytes: number): Promise<Buffer> {
  let decoded = bytes;
  for (const coding of [...codings].reverse()) {
    const decode = decoders[coding] as Decoder;
    try {
      decoded = await decode(decoded, { maxOutputLength: limitBytes });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw payloadTooLarge(limitBytes);
      throw apiError(
        'invalid_encoding',
        `The request body is not valid ${coding} data (Content-Encoding: ${codings.join(', ')}).`,
      );
    }
  }
  return decoded;
}
