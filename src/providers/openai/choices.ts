import type { UpstreamResponse } from '../../upstream/client.js';
import { malformed, parseJsonObject } from '../http.js';
import { errorInsideSuccess } from './parse-error.js';

/**
 * Reading OpenAI's objects that carry `choices` (chat completions, legacy text completions, and their stream chunks):
 * an object without them is the upstream's error sent with a 200, or malformed.
 */

/** A whole completion; `what` names it in the malformed-response error. */
export function parseChoicesObject<Completion>(providerName: string, text: string, what: string): Completion {
  const object = parseJsonObject(providerName, text);
  if (!Array.isArray(object.choices)) {
    if (object.error !== undefined) throw errorInsideSuccess(providerName, object);
    throw malformed(providerName, `a ${what} without choices`);
  }
  return object as unknown as Completion;
}

/** The chunks of a stream, each with its bytes; a stream that stops before [DONE] or a finish reason is malformed. */
export async function* readChoiceChunks<Chunk>(
  providerName: string,
  response: UpstreamResponse,
): AsyncGenerator<{ chunk: Chunk; raw: string }> {
  let done = false;
  let sawFinish = false;
  for await (const event of response.events()) {
    if (event.data === '[DONE]') {
      done = true;
      break;
    }
    const chunk = parseJsonObject(providerName, event.data, 'stream data');
    if (!Array.isArray(chunk.choices)) {
      if (chunk.error !== undefined) throw errorInsideSuccess(providerName, chunk);
      throw malformed(providerName, 'a stream chunk without choices');
    }
    for (const choice of chunk.choices as Array<{ finish_reason?: unknown } | null>) {
      if (choice?.finish_reason) sawFinish = true;
    }
    yield { chunk: chunk as unknown as Chunk, raw: event.data };
  }
  if (!done && !sawFinish) throw malformed(providerName, 'a stream that ended before it was finished');
}
