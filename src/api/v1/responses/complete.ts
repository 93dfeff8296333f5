import { generatedCharacters } from '../../../openai/normalize-chunk.js';
import { parseJsonObject } from '../../../providers/http.js';
import { estimatePromptCharacters, estimateUsage, readUsage, toWireUsage } from '../../../usage/usage.js';
import { announceDroppedParameters } from '../pipeline/dropped-parameters.js';
import type { Exchange, Outcome } from '../pipeline/endpoint.js';
import { sendJson } from '../pipeline/json-answer.js';
import { fromChatCompletion } from './from-chat-completion.js';
import { newResponseId } from './ids.js';
import { checkedNativeResponse, nativeUsage } from './native.js';
import { type ResponsesPlan, type ResponsesResult, responsesOperation } from './operation.js';
import { encryptsThinking } from './reasoning-envelope.js';
import { type Storing, saveResponse } from './state.js';
import type { ResponseObject } from './types.js';
import { inputCharacters, outputCharacters, toResponseUsage } from './usage.js';

/** A response answered as one JSON body: a chat completion translated, or a native upstream's own bytes. */
export async function completeResponse(
  plan: ResponsesPlan,
  base: ResponseObject,
  storing: Storing | undefined,
  exchange: Exchange,
): Promise<Outcome> {
  const { services, trace } = exchange;
  const result: ResponsesResult = await services.dispatcher.run(
    responsesOperation(plan, services.dispatcher.streamFailureReporter(trace, exchange.principal.accountId)),
    exchange.signal,
    trace,
    exchange.principal.accountId,
  );
  if (result.kind === 'native') {
    const provider = trace.served?.provider ?? 'upstream';
    const text = await result.response.text();
    const object = checkedNativeResponse(provider, parseJsonObject(provider, text));
    const reported = readUsage(nativeUsage(object));
    // Usage the upstream did not report is logged as an estimate (marked); one it got wrong (a negative count) is
    // replaced by that estimate for the client too.
    const usage = reported ?? estimateUsage(inputCharacters(plan.request), outputCharacters(object));
    let payload = text;
    if (!reported && object.usage !== undefined && object.usage !== null) {
      object.usage = toResponseUsage(toWireUsage(usage));
      payload = JSON.stringify(object);
    }
    // `store` says what the gateway did with it, not what the upstream did: stored (as a response that says so), not
    // asked to be, or grown too large to store.
    const upstreamStore = object.store;
    object.store = false;
    if (storing && typeof object.id === 'string') {
      object.store = true;
      object.store = saveResponse(storing, object as ResponseObject, exchange).stored;
      // The upstream's id tells another node no time to wait for this node's batch: it is written first.
      await storing.store.writeBeforeAnswering(object.id);
    }
    // The upstream's bytes go on as they came when they already say so.
    if (object.store !== upstreamStore) payload = JSON.stringify(object);
    announceDroppedParameters(exchange.response, trace);
    return { usage, responseBody: sendJson(exchange, payload) };
  }
  if (result.kind !== 'chat') throw new Error('a JSON response got a stream');
  const { translation } = result;
  const completion = result.result.completion;
  const reported = readUsage(result.result.usage ?? completion.usage);
  // An upstream that reports no usage is logged with an estimate (marked as such), and the client gets it too.
  const usage =
    reported ?? estimateUsage(estimatePromptCharacters(translation.request), generatedCharacters(completion));
  const response = fromChatCompletion(completion, {
    // Named when it is queued, not when it was asked for: another node waits for a young id until this node's batch
    // must have been written (response-store.ts), and a generation may outlast that wait.
    response: { ...base, id: newResponseId() },
    toolNames: translation.toolNames,
    usage: reported ? undefined : toWireUsage(usage),
    encryptThinking: encryptsThinking(plan.request.include, storing !== undefined),
  });
  const payload = storing ? saveResponse(storing, response, exchange).json : JSON.stringify(response);
  announceDroppedParameters(exchange.response, trace);
  return { usage, responseBody: sendJson(exchange, payload) };
}
