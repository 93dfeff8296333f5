import type { UpstreamResponse } from '../../upstream/client.js';
import { malformed, parseJsonObject } from '../http.js';
import { errorInsideSuccess } from './parse-error.js';

/**
 * Reading OpenAI's objects that carry `choices` (chat completions, legacy text completions, and their stream chunks):
 * an object without them is the upstream's error sent with a 200, or malformed; so is a choice, message, delta or tool
 * call of the wrong type, which the translations and the stream synthesis would otherwise trip over (a 500).
 */

/** What each choice carries: a chat completion's `message`, a chat chunk's `delta`, or a text completion's text. */
export type ChoiceBody = 'message' | 'delta' | 'text';

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** The first part of `choices` that is not of its type, described for the malformed-response error. */
function choicesFault(choices: unknown[], body: ChoiceBody): string | undefined {
  for (const [position, choice] of choices.entries()) {
    const where = `choices[${position}]`;
    if (!isObject(choice)) return `${where} that is not an object`;
    if (body === 'text') continue;
    const content = choice[body];
    if (content === undefined || content === null) {
      if (body === 'message') return `${where} without a message`;
      continue;
    }
    if (!isObject(content)) return `${where}.${body} that is not an object`;
    const calls = content.tool_calls;
    if (calls === undefined || calls === null) continue;
    if (!Array.isArray(calls)) return `${where}.${body}.tool_calls that is not an array`;
    for (const [index, call] of calls.entries()) {
      const at = `${where}.${body}.tool_calls[${index}]`;
      if (!isObject(call)) return `${at} that is not an object`;
      // A delta may leave the function out (only its index); a whole tool call has one.
      if ((body === 'message' || call.function != null) && !isObject(call.function)) {
        return `${at}.function that is not an object`;
      }
    }
  }
  return undefined;
}

/** A whole completion; `what` names it in the malformed-response error. */
export function parseChoicesObject<Completion>(
  providerName: string,
  text: string,
  what: string,
  body: ChoiceBody,
): Completion {
  const object = parseJsonObject(providerName, text);
  if (!Array.isArray(object.choices)) {
    if (object.error !== undefined) throw errorInsideSuccess(providerName, object);
    throw malformed(providerName, `a ${what} without choices`);
  }
  const fault = choicesFault(object.choices, body);
  if (fault) throw malformed(providerName, `a ${what} with ${fault}`);
  return object as unknown as Completion;
}

/** The chunks of a stream, each with its bytes; a stream that stops before [DONE] or a finish reason is malformed. */
export async function* readChoiceChunks<Chunk>(
  providerName: string,
  response: UpstreamResponse,
  body: ChoiceBody,
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
    const fault = choicesFault(chunk.choices, body);
    if (fault) throw malformed(providerName, `a stream chunk with ${fault}`);
    for (const choice of chunk.choices as Array<{ finish_reason?: unknown }>) {
      if (choice.finish_reason) sawFinish = true;
    }
    yield { chunk: chunk as unknown as Chunk, raw: event.data };
  }
  if (!done && !sawFinish) throw malformed(providerName, 'a stream that ended before it was finished');
}
