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
    const index = choice.index;
    if (index !== undefined && index !== null && !(Number.isSafeInteger(index) && (index as number) >= 0)) {
      return `${where}.index that is not a whole number`;
    }
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

/**
 * Fills in, in choices that passed choicesFault, what an upstream left out and the SDKs read (the AI SDK's schemas
 * require `index`; the openai package's stream helper files a choice under its index and throws at the end for a
 * choice without a finish reason, and reads `delta` unguarded): a missing index is the choice's position (upstreams
 * that leave it out send one choice), a missing finish reason is null in a stream chunk and, in a whole completion,
 * what the message shows (`tool_calls` or `stop`), a missing delta is empty. Reports whether anything was filled in.
 */
function fillInChoices(choices: Array<Record<string, unknown>>, body: ChoiceBody, whole: boolean): boolean {
  let filled = false;
  for (const [position, choice] of choices.entries()) {
    if (choice.index === undefined || choice.index === null) {
      choice.index = position;
      filled = true;
    }
    if (choice.finish_reason === undefined) {
      const calls = (choice.message as { tool_calls?: unknown } | undefined)?.tool_calls;
      choice.finish_reason = !whole ? null : Array.isArray(calls) && calls.length > 0 ? 'tool_calls' : 'stop';
      filled = true;
    }
    if (body === 'delta' && (choice.delta === undefined || choice.delta === null)) {
      choice.delta = {};
      filled = true;
    }
  }
  return filled;
}

/**
 * A whole completion; `what` names it in the malformed-response error. `filledIn` says whether the object now differs
 * from the upstream's bytes (fillInChoices), which then cannot go to the client as they came.
 */
export function parseChoicesObject<Completion>(
  providerName: string,
  text: string,
  what: string,
  body: ChoiceBody,
): { completion: Completion; filledIn: boolean } {
  const object = parseJsonObject(providerName, text);
  if (!Array.isArray(object.choices)) {
    if (object.error !== undefined) throw errorInsideSuccess(providerName, object);
    throw malformed(providerName, `a ${what} without choices`);
  }
  const fault = choicesFault(object.choices, body);
  if (fault) throw malformed(providerName, `a ${what} with ${fault}`);
  const filledIn = fillInChoices(object.choices, body, true);
  return { completion: object as unknown as Completion, filledIn };
}

/**
 * The chunks of a stream, each with its bytes (none when something was filled in); a stream that stops before [DONE]
 * or a finish reason is malformed.
 */
export async function* readChoiceChunks<Chunk>(
  providerName: string,
  response: UpstreamResponse,
  body: ChoiceBody,
): AsyncGenerator<{ chunk: Chunk; raw: string | undefined }> {
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
    const filledIn = fillInChoices(chunk.choices, body, false);
    yield { chunk: chunk as unknown as Chunk, raw: filledIn ? undefined : event.data };
  }
  if (!done && !sawFinish) throw malformed(providerName, 'a stream that ended before it was finished');
}
