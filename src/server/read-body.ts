import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import { apiError, payloadTooLarge } from '../errors/api-error.js';
import type { CancelSignal } from './cancellation.js';

/**
 * Reads a request body under a size limit and parses it as JSON. A declared Content-Length over the limit is refused
 * before reading; a body that grows past it is cut off. Bytes that are not UTF-8 are refused rather than silently
 * replaced, so what reaches the upstream is exactly what the client meant.
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
  if (cancellation.aborted) return Promise.reject(incompleteBody());
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
      try {
        resolve(parseJsonBody(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size)));
      } catch (error) {
        reject(error);
      }
    };
    const onAbort = () => {
      if (settled) return;
      settle();
      reject(incompleteBody());
    };
    request.on('data', onData);
    request.on('end', onEnd);
    cancellation.addEventListener('abort', onAbort);
  });
}

const incompleteBody = () => apiError('incomplete_body', 'The request body was incomplete.');

/** Deeper JSON than any real request needs; beyond it, serialising the body again would exhaust the stack. */
export const maxJsonDepth = 128;

/**
 * One pass over JSON text (strings skipped) that finds nesting deeper than `depthLimit` and counts the members named
 * in the top-level object. Returns that count, or -1 when the text is nested too deep. Strings are skipped with
 * indexOf (native), not character by character: most of a chat request is string content.
 */
export function scanJsonText(text: string, depthLimit: number): number {
  let depth = 0;
  let members = 0;
  let expectName = false;
  const length = text.length;
  for (let index = 0; index < length; index++) {
    const character = text.charCodeAt(index);
    if (character === 34 /* " */) {
      if (depth === 1 && expectName) {
        members++;
        expectName = false;
      }
      // The closing quote is the next one not escaped by an odd number of backslashes.
      let end = index;
      for (;;) {
        end = text.indexOf('"', end + 1);
        if (end === -1) return members; // unterminated: JSON.parse reports it
        let backslashes = 0;
        while (text.charCodeAt(end - 1 - backslashes) === 92 /* \ */) backslashes++;
        if (backslashes % 2 === 0) break;
      }
      index = end;
    } else if (character === 123 /* { */ || character === 91 /* [ */) {
      if (++depth > depthLimit) return -1;
      if (depth === 1) expectName = character === 123;
    } else if (character === 125 /* } */ || character === 93 /* ] */) {
      depth--;
    } else if (character === 44 /* , */ && depth === 1) {
      expectName = true;
    }
  }
  return members;
}

/** The deepest nesting of arrays and objects in JSON text (strings skipped) exceeds `limit`. */
export function jsonDepthExceeds(text: string, limit: number): boolean {
  return scanJsonText(text, limit) === -1;
}

function memberCount(value: unknown): number {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return -1;
  let count = 0;
  for (const _name in value) count++;
  return count;
}

/** Parses a request body read whole: UTF-8, not nested too deep, JSON; and whether it may be forwarded as it is. */
export function parseJsonBody(bytes: Buffer): ParsedBody {
  if (bytes.length === 0) throw apiError('invalid_request', `${invalidJsonMessage} The body was empty.`);
  if (!isUtf8(bytes)) throw apiError('invalid_encoding', 'The request body is not valid UTF-8.');
  const text = bytes.toString('utf8');
  const members = scanJsonText(text, maxJsonDepth);
  if (members === -1) {
    throw apiError('invalid_value', `The JSON body is nested more than ${maxJsonDepth} levels deep.`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw apiError('invalid_request', invalidJsonMessage);
  }
  return { value, text, bytes, forwardable: memberCount(value) === members };
}
