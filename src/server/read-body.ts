import { isUtf8 } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import { ApiError, invalidRequest, payloadTooLarge } from './errors.js';

/**
 * Reads a request body under a size limit and parses it as JSON. A declared Content-Length over the limit is refused
 * before reading; a body that grows past it is cut off. Bytes that are not UTF-8 are refused rather than silently
 * replaced, so what reaches the upstream is exactly what the client meant.
 */

export interface ParsedBody {
  value: unknown;
  text: string;
}

const invalidJsonMessage =
  "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.)";

export function readBody(request: IncomingMessage, limitBytes: number): Promise<Buffer> {
  const declared = request.headers['content-length'];
  if (declared !== undefined && Number(declared) > limitBytes) return Promise.reject(payloadTooLarge(limitBytes));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const finish = (error: unknown, body?: Buffer) => {
      if (settled) return;
      settled = true;
      request.off('data', onData);
      request.off('end', onEnd);
      request.off('error', onError);
      request.off('close', onClose);
      if (error) reject(error);
      else resolve(body as Buffer);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limitBytes) {
        // Stop buffering; the response goes out with Connection: close so the rest of the upload is not read.
        request.pause();
        finish(payloadTooLarge(limitBytes));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => finish(undefined, chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
    const onError = (error: Error) =>
      finish(
        new ApiError({
          status: 400,
          type: 'invalid_request_error',
          message: 'The request body could not be read.',
          cause: error,
        }),
      );
    const onClose = () => {
      if (!request.complete)
        finish(
          new ApiError({ status: 400, type: 'invalid_request_error', message: 'The request body was incomplete.' }),
        );
    };
    request.on('data', onData);
    request.on('end', onEnd);
    request.on('error', onError);
    request.on('close', onClose);
  });
}

/** Deeper JSON than any real request needs; beyond it, serialising the body again would exhaust the stack. */
export const maxJsonDepth = 128;

/** The deepest nesting of arrays and objects in JSON text (strings skipped), scanning no further than needed. */
export function jsonDepthExceeds(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const character = text.charCodeAt(index);
    if (inString) {
      if (character === 92 /* \\ */) index++;
      else if (character === 34 /* " */) inString = false;
    } else if (character === 34) {
      inString = true;
    } else if (character === 123 /* { */ || character === 91 /* [ */) {
      if (++depth > limit) return true;
    } else if (character === 125 /* } */ || character === 93 /* ] */) {
      depth--;
    }
  }
  return false;
}

export async function readJsonBody(request: IncomingMessage, limitBytes: number): Promise<ParsedBody> {
  const bytes = await readBody(request, limitBytes);
  if (bytes.length === 0) throw invalidRequest(`${invalidJsonMessage} The body was empty.`);
  if (!isUtf8(bytes)) throw invalidRequest('The request body is not valid UTF-8.', null, 'invalid_encoding');
  const text = bytes.toString('utf8');
  if (jsonDepthExceeds(text, maxJsonDepth)) {
    throw invalidRequest(`The JSON body is nested more than ${maxJsonDepth} levels deep.`, null, 'invalid_value');
  }
  try {
    return { value: JSON.parse(text), text };
  } catch {
    throw invalidRequest(invalidJsonMessage);
  }
}
