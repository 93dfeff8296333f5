import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import { apiError, payloadTooLarge, requestCancelled } from '../errors/api-error.js';
import { countTopLevelNames } from '../json/json-bytes.js';
import type { CancelSignal } from './cancellation.js';
import { contentCodings, decodeBody } from './decode-body.js';

/**
 * Reads a request body under a size limit and parses it as JSON. A declared Content-Length over the limit is refused
 * before reading; a body that grows past it is cut off. A compressed body (Content-Encoding) is decoded under the same
 * limit. Bytes that are not UTF-8 are refused rather than silently replaced, so what reaches the upstream is exactly
 * what the client meant. The Content-Type is not required to be JSON (curl -d sends form encoding), but a charset
 * other than UTF-8 is refused, and a body that is not JSON is told what it was sent as.
 */

export interface ParsedBody {
  value: unknown;
  text: string;
  /** The body exactly as received. */
  bytes: Buffer;
  /**
   * True when the body is an object whose text names each top-level member once. Then any JSON parser reads from
   * these bytes the object we validated and may pass them on unchanged; with a member repeated, parsers disagree on
   * which occurrence counts (V8 keeps the last, some keep the first), so the upstream could be sent a model the caller
   * was not authorized for.
   */
  forwardable: boolean;
}

const invalidJsonMessage =
  "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)";

/**
 * Reads the body and parses it: one promise and two listeners per request (this runs for every request). A client
 * that goes away mid-upload is learned from the request's cancellation (the data plane cancels when the response
 * closes before it is finished), not from listeners of our own on the request.
 */
export function readJsonBody(
  request: IncomingMessage,
  limitBytes: number,
  cancellation: CancelSignal,
): Promise<ParsedBody> {
  const declared = request.headers['content-length'];
  if (declared !== undefined && Number(declared) > limitBytes) return Promise.reject(payloadTooLarge(limitBytes));
  if (cancellation.aborted) return Promise.reject(leftEarly(request));
  let codings: string[] | undefined;
  try {
    checkCharset(request.headers['content-type']);
    codings = contentCodings(request.headers['content-encoding']);
  } catch (error) {
    return Promise.reject(error);
  }
  const contentType = request.headers['content-type'];
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = () => {
      settled = true;
      cancellation.removeEventListener('abort', onAbort);
      // The request object lives as long as the response, a whole stream: listeners left on it would keep the chunks
      // and, through this promise, the body (text, bytes and parsed value) alive until the stream ends.
      request.off('data', onData);
      request.off('end', onEnd);
    };
    const onData = (chunk: Buffer) => {
      if (settled) return;
      size += chunk.length;
      if (size > limitBytes) {
        // Stop buffering; the response goes out with Connection: close so the rest of the upload is not read.
        settle();
        request.pause();
        reject(payloadTooLarge(limitBytes));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      if (settled) return;
      settle();
      const bytes = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size);
      if (codings) {
        decodeBody(bytes, codings, limitBytes)
          .then((decoded) => parseJsonBody(decoded, contentType))
          .then(resolve, reject);
        return;
      }
      try {
        resolve(parseJsonBody(bytes, contentType));
      } catch (error) {
        reject(error);
      }
    };
    const onAbort = () => {
      if (settled) return;
      settle();
      reject(leftEarly(request));
    };
    request.on('data', onData);
    request.on('end', onEnd);
    cancellation.addEventListener('abort', onAbort);
  });
}

/**
 * Why the body cannot be read once the request is cancelled: it never arrived whole, or it did and the client left
 * before it was read (while the key was looked up): then the request is cancelled, its body not at fault.
 */
const leftEarly = (request: IncomingMessage) =>
  request.complete ? requestCancelled() : apiError('incomplete_body', 'The request body was incomplete.');

/** Deeper JSON than any real request needs; beyond it, serialising the body again would exhaust the stack. */
export const maxJsonDepth = 128;

function memberCount(value: unknown): number {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return -1;
  let count = 0;
  for (const _name in value) count++;
  return count;
}

/** A charset other than UTF-8's (or ASCII, a part of it) would be misread: refused by name, not decoded wrongly. */
function checkCharset(contentType: string | undefined): void {
  if (contentType === undefined || !contentType.includes('charset')) return;
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(contentType)?.[1]?.toLowerCase();
  if (charset === undefined || charset === 'utf-8' || charset === 'utf8' || charset === 'us-ascii') return;
  throw apiError(
    'unsupported_media_type',
    `The request body must be JSON in UTF-8, but its Content-Type says charset=${charset.slice(0, 32)}.`,
  );
}

/** What to add to "not valid JSON" when the client said the body was something else (a form, a file upload). */
function sentAs(contentType: string | undefined): string {
  const mediaType = contentType?.split(';')[0]?.trim().toLowerCase();
  if (!mediaType || mediaType.includes('json')) return '';
  return ` The body was sent as ${mediaType.slice(0, 64)}; send JSON, with Content-Type: application/json.`;
}

/** Parses a request body read whole: UTF-8, not nested too deep, JSON; and whether it may be forwarded as it is. */
export function parseJsonBody(bytes: Buffer, contentType?: string): ParsedBody {
  if (bytes.length === 0) {
    throw apiError('invalid_request', `${invalidJsonMessage} The body was empty.${sentAs(contentType)}`);
  }
  if (!isUtf8(bytes)) throw apiError('invalid_encoding', 'The request body is not valid UTF-8.');
  const members = countTopLevelNames(bytes, maxJsonDepth);
  if (members === -1) {
    throw apiError('invalid_value', `The JSON body is nested more than ${maxJsonDepth} levels deep.`);
  }
  const text = bytes.toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw apiError('invalid_request', `${invalidJsonMessage}${sentAs(contentType)}`);
  }
  return { value, text, bytes, forwardable: memberCount(value) === members };
}
